import type { PolicyDocument } from '../domain/policy';
import type { TransactionRow } from './transaction-row';

/** What the review rules read: the policy version a decision was made under, and who holds and who made a key. */
export interface ReviewRuleSources {
  policyVersion(orgId: string, policyId: string, version: number): Promise<{ policy: PolicyDocument } | null>;
  /**
   * A key of this organization: its recorded owner, and who created it (`created_by`: a key id,
   * `user:<id>`, `operator`); each null where not recorded (a key from before it was). null: not a
   * key of this organization.
   */
  key(orgId: string, keyId: string): Promise<{ owner: string | null; createdBy: string | null } | null>;
}

/** What the aggregate decides a review on, from the policy version that escalated the authorization. */
export interface ReviewRuling {
  /**
   * Separation of duties (`review.require_distinct_reviewer`): who asked for the payment, and
   * whether the reviewer is the requester's principal by another key. null: no such rule.
   */
  separation: { requesterActor: string | null; sameOwner: boolean } | null;
  /** Approvals by distinct reviewers before the authorization is approved (`review.approvals_required`, default 1). */
  approvalsRequired: 1 | 2;
  /** The reviewer already approved this authorization: with the same key, or as the same principal. */
  alreadyApproved: boolean;
  /**
   * The reviewer is the requester's principal (its key, a key of the same owner, or a key in the
   * same creator chain): under `approvals_required: 2` such a reviewer never gives an approval,
   * with or without `require_distinct_reviewer`.
   */
  reviewerIsRequester: boolean;
}

const keyIdOf = (actor: string | null) => (actor?.startsWith('api_key:') ? actor.slice('api_key:'.length) : null);

/** How far a creator chain is followed (a chain is acyclic; the bound only guards the reads). */
const MAX_CHAIN = 32;

/**
 * The review rules of the policy version that escalated an authorization: separation of duties
 * (the reviewer may not be the requester's principal) and the number of distinct principals who
 * must approve. Two actors are the same principal when they are the same actor; or both keys with
 * the same recorded owner; or one key is in the other's creator chain (a key and the keys it
 * minted, transitively, as recorded in `created_by`); or both chains lead to the same console
 * user (`user:<id>`, who made both keys, or who is the other actor). Keys with neither owner nor
 * creator recorded (made before `created_by` was) count alone, as before. `operator` (the admin
 * CLI) joins nobody: it makes keys for different people.
 */
export class ReviewRules {
  constructor(private readonly sources: ReviewRuleSources) {}

  async ruling(
    row: Pick<TransactionRow, 'organization_id' | 'policy_id' | 'policy_version'>,
    who: { requesterActor: string | null; reviewerActor: string; priorApprovers: readonly string[] },
  ): Promise<ReviewRuling> {
    const none: ReviewRuling = { separation: null, approvalsRequired: 1, alreadyApproved: who.priorApprovers.includes(who.reviewerActor), reviewerIsRequester: false };
    if (row.policy_version === null) return none;
    const version = await this.sources.policyVersion(row.organization_id, row.policy_id, Number(row.policy_version));
    const review = version?.policy.review;
    if (!review) return none;
    const org = row.organization_id;
    // One read per key for the whole ruling: its owner and its creator come from the same row.
    const keys = new Map<string, ReturnType<ReviewRuleSources['key']>>();
    const keyOf = (keyId: string) => keys.get(keyId) ?? keys.set(keyId, this.sources.key(org, keyId)).get(keyId)!;
    const ownerOf = async (keyId: string) => (await keyOf(keyId))?.owner ?? null;
    const chains = new Map<string, Promise<string[]>>();
    /** The actor and its creators, nearest first: key ids, and a final `user:<id>` or `operator` where recorded. */
    const chainOf = (actor: string) => chains.get(actor) ?? chains.set(actor, this.chain(actor, async (keyId) => (await keyOf(keyId))?.createdBy ?? null)).get(actor)!;
    const samePerson = async (a: string | null, b: string) => {
      if (a === null) return false;
      if (a === b) return true;
      const [ka, kb] = [keyIdOf(a), keyIdOf(b)];
      if (ka && kb) {
        const [oa, ob] = await Promise.all([ownerOf(ka), ownerOf(kb)]);
        if (oa !== null && oa === ob) return true;
      }
      const [ca, cb] = await Promise.all([chainOf(a), chainOf(b)]);
      if (ca.includes(cb[0]) || cb.includes(ca[0])) return true;
      const people = new Set(ca.filter((x) => x.startsWith('user:')));
      return cb.some((x) => x.startsWith('user:') && people.has(x));
    };
    const sameAsRequester = who.requesterActor !== who.reviewerActor && (await samePerson(who.requesterActor, who.reviewerActor));
    const separation = review.require_distinct_reviewer ? { requesterActor: who.requesterActor, sameOwner: sameAsRequester } : null;
    const approvalsRequired = review.approvals_required ?? 1;
    const alreadyApproved = (await Promise.all(who.priorApprovers.map((a) => samePerson(a, who.reviewerActor)))).some(Boolean);
    const reviewerIsRequester = who.requesterActor !== null && (who.requesterActor === who.reviewerActor || sameAsRequester);
    return { separation, approvalsRequired, alreadyApproved, reviewerIsRequester };
  }

  /** `api_key:key_a` → ['key_a', 'key_b' (who made key_a), …, 'user:usr_1']; any other actor → [itself]. */
  private async chain(actor: string, creatorOf: (keyId: string) => Promise<string | null>): Promise<string[]> {
    const first = keyIdOf(actor);
    if (!first) return [actor];
    const chain = [first];
    let current: string | null = first;
    while (current && chain.length < MAX_CHAIN) {
      const creator: string | null = await creatorOf(current);
      if (!creator || chain.includes(creator)) break;
      chain.push(creator);
      current = creator.startsWith('key_') ? creator : null;
    }
    return chain;
  }
}
