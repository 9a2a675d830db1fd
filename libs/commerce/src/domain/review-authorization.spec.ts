import { approvalsOf, APPROVAL_RECORDED, reviewAuthorization, TransactionState } from './transaction.aggregate';

/** reviewAuthorization under review.approvals_required, as a pure decision (no store). */
describe('reviewAuthorization with several required approvals', () => {
  const state: TransactionState = {
    transaction_id: 'txn_1',
    authorization_id: 'auth_1',
    organization_id: 'org_a',
    status: 'needs_review',
    amount_cents: 30_000,
    approved_amount_cents: null,
    expires_at: '2026-11-26T00:00:00.000Z',
    reservations: [{ cap_key: 'daily:USD:2026-11-25', amount_cents: 30_000 }],
    revision: 1,
  };
  const now = new Date('2026-11-25T10:00:00.000Z');
  const ctx = (approvals: { required: number; prior: { approver: string; amount_cents: number }[]; alreadyApproved: boolean } | null) => ({
    decidedEventHash: 'sha256:ab',
    issuer: 'sigil.test',
    signReview: (payload: Record<string, unknown>) => ({ payload }),
    approvals,
  });

  it('the first of two approvals keeps needs_review, holds everything, and signs which approval it is', () => {
    const { events, refusal } = reviewAuthorization(state, { kind: 'approve', amount_cents: 20_000, note: 'ok' }, 'api_key:key_sam', now, ctx({ required: 2, prior: [], alreadyApproved: false }));
    expect(refusal).toBeUndefined();
    expect(events).toEqual([
      {
        type: APPROVAL_RECORDED,
        data: expect.objectContaining({ status: 'needs_review', approver: 'api_key:key_sam', amount_cents: 20_000, approval: 1, approvals_required: 2 }),
        metadata: { actor: 'api_key:key_sam', correlation_id: 'txn_1' },
      },
    ]);
    expect(events[0].data).not.toHaveProperty('released');
    expect((events[0].data.review_record as { payload: unknown }).payload).toMatchObject({ review: 'approved', approved_amount_cents: 20_000, approval: 1, approvals_required: 2 });
    expect(approvalsOf([{ type: 'authorization.escalated', data: {} }, events[0]])).toEqual([expect.objectContaining({ approver: 'api_key:key_sam', amount_cents: 20_000 })]);
  });

  it('the second approves at the lowest amount approved, releasing the rest; its review signs its own amount', () => {
    for (const [first, second, applied] of [
      [20_000, 25_000, 20_000],
      [25_000, 20_000, 20_000],
      [30_000, undefined, 30_000],
    ] as const) {
      const { events } = reviewAuthorization(state, { kind: 'approve', amount_cents: second, note: null }, 'api_key:key_lee', now, ctx({ required: 2, prior: [{ approver: 'api_key:key_sam', amount_cents: first }], alreadyApproved: false }));
      expect(events[0]).toMatchObject({
        type: 'authorization.human_approved',
        data: { status: 'authorized', amount_cents: applied, approvers: ['api_key:key_sam', 'api_key:key_lee'], released: applied < 30_000 ? [{ cap_key: 'daily:USD:2026-11-25', amount_cents: 30_000 - applied }] : [] },
      });
      expect((events[0].data.review_record as { payload: unknown }).payload).toMatchObject({ approved_amount_cents: second ?? 30_000, approval: 2, approvals_required: 2 });
    }
  });

  it('refuses a reviewer who already approved; a rejection after one approval rejects and releases all', () => {
    expect(() => reviewAuthorization(state, { kind: 'approve', note: null }, 'api_key:key_sam', now, ctx({ required: 2, prior: [{ approver: 'api_key:key_sam', amount_cents: 30_000 }], alreadyApproved: true }))).toThrow(
      expect.objectContaining({ code: 'reviewer_already_approved', details: { approvals_required: 2, approvals_recorded: 1 } }),
    );
    const { events } = reviewAuthorization(state, { kind: 'reject', note: 'no' }, 'api_key:key_sam', now, ctx({ required: 2, prior: [{ approver: 'api_key:key_sam', amount_cents: 10_000 }], alreadyApproved: true }));
    expect(events[0]).toMatchObject({ type: 'authorization.rejected', data: { status: 'rejected', released: [{ cap_key: 'daily:USD:2026-11-25', amount_cents: 30_000 }] } });
    expect((events[0].data.review_record as { payload: object }).payload).not.toHaveProperty('approval');
  });

  it('one required approval (the default) decides at once, with no approval count signed', () => {
    const { events } = reviewAuthorization(state, { kind: 'approve', note: null }, 'api_key:key_sam', now, ctx(null));
    expect(events[0]).toMatchObject({ type: 'authorization.human_approved', data: { amount_cents: 30_000 } });
    expect(events[0].data).not.toHaveProperty('approvers');
    expect((events[0].data.review_record as { payload: object }).payload).not.toHaveProperty('approval');
  });
});
