import type { PolicyDocument } from '../domain/policy';
import { ReviewRules } from './review-rules';

describe('ReviewRules (the policy version that escalated an authorization decides)', () => {
  const row = { organization_id: 'org_a', policy_id: 'default', policy_version: 1 } as const;
  const rules = (review: PolicyDocument['review'] | null, owners: Record<string, string> = {}) =>
    new ReviewRules({
      policyVersion: async () => (review === null ? null : { policy: { review } }),
      keyOwner: async (_org, keyId) => owners[keyId] ?? null,
    });
  const who = (reviewer: string, priorApprovers: string[] = []) => ({ requesterActor: 'api_key:key_agent', reviewerActor: reviewer, priorApprovers });

  it('without review rules: one approval, no separation; only the same actor counts as having approved', async () => {
    for (const r of [rules(null), rules(undefined), rules({})]) {
      expect(await r.ruling(row, who('api_key:key_sam'))).toEqual({ separation: null, approvalsRequired: 1, alreadyApproved: false });
    }
    expect(await rules({}).ruling({ ...row, policy_version: null }, who('api_key:key_sam', ['api_key:key_sam']))).toMatchObject({ alreadyApproved: true });
  });

  it('separation: the requesting key, or another key of its owner, is the requester', async () => {
    const r = rules({ require_distinct_reviewer: true }, { key_agent: 'dana', key_dana2: 'dana', key_sam: 'sam' });
    expect((await r.ruling(row, who('api_key:key_dana2'))).separation).toEqual({ requesterActor: 'api_key:key_agent', sameOwner: true });
    expect((await r.ruling(row, who('api_key:key_sam'))).separation).toEqual({ requesterActor: 'api_key:key_agent', sameOwner: false });
    expect((await r.ruling(row, who('api_key:key_agent'))).separation).toEqual({ requesterActor: 'api_key:key_agent', sameOwner: false });
  });

  it('approvals_required: 2 — a prior approval by the same key or the same owner means this reviewer already approved', async () => {
    const r = rules({ approvals_required: 2 }, { key_sam: 'sam', key_sam2: 'sam', key_lee: 'lee' });
    expect(await r.ruling(row, who('api_key:key_sam'))).toEqual({ separation: null, approvalsRequired: 2, alreadyApproved: false });
    expect((await r.ruling(row, who('api_key:key_sam', ['api_key:key_sam']))).alreadyApproved).toBe(true);
    expect((await r.ruling(row, who('api_key:key_sam2', ['api_key:key_sam']))).alreadyApproved).toBe(true);
    expect((await r.ruling(row, who('api_key:key_lee', ['api_key:key_sam']))).alreadyApproved).toBe(false);
    // Keys without an owner are only themselves.
    expect((await r.ruling(row, who('api_key:key_x', ['api_key:key_y']))).alreadyApproved).toBe(false);
  });
});
