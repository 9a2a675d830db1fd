import type { PolicyDocument } from '../domain/policy';
import { ReviewRules } from './review-rules';

describe('ReviewRules (the policy version that escalated an authorization decides)', () => {
  const row = { organization_id: 'org_a', policy_id: 'default', policy_version: 1 } as const;
  const rules = (review: PolicyDocument['review'] | null, owners: Record<string, string> = {}, creators: Record<string, string> = {}) =>
    new ReviewRules({
      policyVersion: async () => (review === null ? null : { policy: { review } }),
      key: async (_org, keyId) => ({ owner: owners[keyId] ?? null, createdBy: creators[keyId] ?? null }),
    });
  const who = (reviewer: string, priorApprovers: string[] = []) => ({ requesterActor: 'api_key:key_agent', reviewerActor: reviewer, priorApprovers });

  it('without review rules: one approval, no separation; only the same actor counts as having approved', async () => {
    for (const r of [rules(null), rules(undefined), rules({})]) {
      expect(await r.ruling(row, who('api_key:key_sam'))).toEqual({ separation: null, approvalsRequired: 1, alreadyApproved: false, reviewerIsRequester: false });
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
    expect(await r.ruling(row, who('api_key:key_sam'))).toEqual({ separation: null, approvalsRequired: 2, alreadyApproved: false, reviewerIsRequester: false });
    expect((await r.ruling(row, who('api_key:key_sam', ['api_key:key_sam']))).alreadyApproved).toBe(true);
    expect((await r.ruling(row, who('api_key:key_sam2', ['api_key:key_sam']))).alreadyApproved).toBe(true);
    expect((await r.ruling(row, who('api_key:key_lee', ['api_key:key_sam']))).alreadyApproved).toBe(false);
    // Keys without an owner are only themselves.
    expect((await r.ruling(row, who('api_key:key_x', ['api_key:key_y']))).alreadyApproved).toBe(false);
  });

  it('a key and the keys it minted (transitively, by created_by) are one principal, for both rules', async () => {
    // key_agent made key_child, which made key_grandchild; key_sam was made by the operator, as was key_agent.
    const creators = { key_child: 'key_agent', key_grandchild: 'key_child', key_agent: 'operator', key_sam: 'operator' };
    const sep = rules({ require_distinct_reviewer: true }, {}, creators);
    for (const minted of ['api_key:key_child', 'api_key:key_grandchild']) {
      expect((await sep.ruling(row, who(minted))).separation).toEqual({ requesterActor: 'api_key:key_agent', sameOwner: true });
    }
    // Both made by the operator: different people.
    expect((await sep.ruling(row, who('api_key:key_sam'))).separation).toEqual({ requesterActor: 'api_key:key_agent', sameOwner: false });
    const two = rules({ approvals_required: 2 }, {}, { ...creators, key_lee2: 'key_lee', key_lee3: 'key_lee2' });
    expect((await two.ruling(row, who('api_key:key_lee3', ['api_key:key_lee']))).alreadyApproved).toBe(true);
    expect((await two.ruling(row, who('api_key:key_lee', ['api_key:key_lee3']))).alreadyApproved).toBe(true);
    expect((await two.ruling(row, who('api_key:key_sam', ['api_key:key_lee3']))).alreadyApproved).toBe(false);
    // Two keys made by one console user are that user, and the user themself.
    const people = rules({ approvals_required: 2 }, {}, { key_u1: 'user:usr_1', key_u2: 'user:usr_1', key_u3: 'user:usr_3' });
    expect((await people.ruling(row, who('api_key:key_u2', ['api_key:key_u1']))).alreadyApproved).toBe(true);
    expect((await people.ruling(row, who('user:usr_1', ['api_key:key_u1']))).alreadyApproved).toBe(true);
    expect((await people.ruling(row, who('api_key:key_u3', ['api_key:key_u1']))).alreadyApproved).toBe(false);
    // A recorded cycle (impossible through the aggregate) ends the walk instead of looping.
    expect((await rules({ approvals_required: 2 }, {}, { key_a: 'key_b', key_b: 'key_a' }).ruling(row, who('api_key:key_a', ['api_key:key_c']))).alreadyApproved).toBe(false);
  });

  it('approvals_required: 2 — the requester\u2019s principal is flagged as the requester even without require_distinct_reviewer', async () => {
    const r = rules({ approvals_required: 2 }, { key_dana2: 'dana', key_agent: 'dana' }, { key_child: 'key_agent' });
    for (const reviewer of ['api_key:key_agent', 'api_key:key_dana2', 'api_key:key_child']) {
      expect(await r.ruling(row, who(reviewer))).toMatchObject({ separation: null, approvalsRequired: 2, reviewerIsRequester: true });
    }
    expect((await r.ruling(row, who('api_key:key_sam'))).reviewerIsRequester).toBe(false);
    // Keys from before created_by (no owner, no creator) keep today's rules: only themselves.
    expect((await rules({ approvals_required: 2 }).ruling(row, who('api_key:key_other'))).reviewerIsRequester).toBe(false);
  });
});
