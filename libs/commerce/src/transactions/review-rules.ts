import type { PolicyDocument } from '../domain/policy';
import type { TransactionRow } from './transaction-row';

/** What the review rules read: the policy version a decision was made under, and who holds a key. */
export interface ReviewRuleSources {
  policyVersion(orgId: string, policyId: string, version: number): Promise<{ policy: PolicyDocument } | null>;
  /** The key's owner, or null (no owner recorded, or not a key of this organization). */
  keyOwner(orgId: string, keyId: string): Promise<string | null>;
}

/** What the aggregate decides a review on, from the policy version that escalated the authorization. */
export interface ReviewRuling {
  /**
   * Separation of duties (`review.require_distinct_reviewer`): who asked for the payment, and
   * whether the reviewer's key has the same owner as the requester's. null: no such rule.
   */
  separation: { requesterActor: string | null; sameOwner: boolean } | null;
  /** Approvals by distinct reviewers before the authorization is approved (`review.approvals_required`, default 1). */
  approvalsRequired: 1 | 2;
  /** The reviewer already approved this authorization: with the same key, or with another key of the same owner. */
  alreadyApproved: boolean;
}

const keyIdOf = (actor: string | null) => (actor?.startsWith('api_key:') ? actor.slice('api_key:'.length) : null);

/**
 * The review rules of the policy version that escalated an authorization: separation of duties
 * (the reviewer may be neither the requesting key nor another key with the same owner) and the
 * number of distinct reviewers who must approve. Two keys are the same person when they are the
 * same key, or both have the same recorded owner; keys with no owner recorded count alone.
 */
export class ReviewRules {
  constructor(private readonly sources: ReviewRuleSources) {}

  async ruling(
    row: Pick<TransactionRow, 'organization_id' | 'policy_id' | 'policy_version'>,
    who: { requesterActor: string | null; reviewerActor: string; priorApprovers: readonly string[] },
  ): Promise<ReviewRuling> {
    const none: ReviewRuling = { separation: null, approvalsRequired: 1, alreadyApproved: who.priorApprovers.includes(who.reviewerActor) };
    if (row.policy_version === null) return none;
    const version = await this.sources.policyVersion(row.organization_id, row.policy_id, Number(row.policy_version));
    const review = version?.policy.review;
    if (!review) return none;
    const owners = new Map<string, Promise<string | null>>();
    const ownerOf = (keyId: string) => owners.get(keyId) ?? owners.set(keyId, this.sources.keyOwner(row.organization_id, keyId)).get(keyId)!;
    const samePerson = async (a: string | null, b: string) => {
      if (a === b) return true;
      const [ka, kb] = [keyIdOf(a), keyIdOf(b)];
      if (!ka || !kb) return false;
      const [oa, ob] = await Promise.all([ownerOf(ka), ownerOf(kb)]);
      return oa !== null && oa === ob;
    };
    const separation = review.require_distinct_reviewer
      ? { requesterActor: who.requesterActor, sameOwner: who.requesterActor !== who.reviewerActor && (await samePerson(who.requesterActor, who.reviewerActor)) }
      : null;
    const approvalsRequired = review.approvals_required ?? 1;
    const alreadyApproved = (await Promise.all(who.priorApprovers.map((a) => samePerson(a, who.reviewerActor)))).some(Boolean);
    return { separation, approvalsRequired, alreadyApproved };
  }
}
