import type { PolicyDocument } from '../domain/policy';
import type { TransactionRow } from './transaction-row';

/** What the review rules read: the policy version a decision was made under, and who holds a key. */
export interface ReviewRuleSources {
  policyVersion(orgId: string, policyId: string, version: number): Promise<{ policy: PolicyDocument } | null>;
  /** The key's owner, or null (no owner recorded, or not a key of this organization). */
  keyOwner(orgId: string, keyId: string): Promise<string | null>;
}

const keyIdOf = (actor: string | null) => (actor?.startsWith('api_key:') ? actor.slice('api_key:'.length) : null);

/**
 * Separation of duties for a review: when the policy version that escalated the authorization
 * says `review.require_distinct_reviewer`, the reviewer may be neither the requesting key nor
 * another key with the same owner. Returns what the aggregate decides on, or null (no rule).
 */
export class ReviewRules {
  constructor(private readonly sources: ReviewRuleSources) {}

  async separation(row: Pick<TransactionRow, 'organization_id' | 'policy_id' | 'policy_version'>, requesterActor: string | null, reviewerActor: string) {
    if (row.policy_version === null) return null;
    const version = await this.sources.policyVersion(row.organization_id, row.policy_id, Number(row.policy_version));
    if (!version?.policy.review?.require_distinct_reviewer) return null;
    const [requesterKey, reviewerKey] = [keyIdOf(requesterActor), keyIdOf(reviewerActor)];
    let sameOwner = false;
    if (requesterKey && reviewerKey && requesterKey !== reviewerKey) {
      const [a, b] = await Promise.all([this.sources.keyOwner(row.organization_id, requesterKey), this.sources.keyOwner(row.organization_id, reviewerKey)]);
      sameOwner = a !== null && a === b;
    }
    return { requesterActor, sameOwner };
  }
}
