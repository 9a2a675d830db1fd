import { verifyRecord } from '../receipts/signed-record';
import { commerceWorld, specSignatureCheck } from '../transactions/transaction-spec-fixtures';
import { RejectAuthorizationCommand } from './reject-authorization.command';
import { RejectAuthorizationHandler } from './reject-authorization.handler';

describe('RejectAuthorizationHandler (Transaction aggregate on the in-memory store)', () => {
  it('records a human rejection with the note, releasing every reservation', async () => {
    const w = commerceWorld();
    const sut = new RejectAuthorizationHandler(w.rows, w.transactions, w.clock, w.authority, w.rules);
    const t = await w.escalated('org_a', 12_000);
    const row = await sut.execute(new RejectAuthorizationCommand('org_a', t.authorization_id, 'api_key:key_reviewer', 'not this vendor'));
    expect(row).toMatchObject({ status: 'rejected', decision: 'blocked', reason_code: 'REJECTED_BY_REVIEWER', reservations: [] });
    const [escalation, e] = await w.store.readStream(`transaction-${t.transaction_id}`, { fromRevision: 1 });
    const { review_record: record, ...data } = e.data as { review_record: unknown };
    expect(data).toEqual({
      ...t,
      status: 'rejected',
      decision: 'blocked',
      reason_code: 'REJECTED_BY_REVIEWER',
      rejected_by: 'human',
      approver: 'api_key:key_reviewer',
      note: 'not this vendor',
      released: [{ cap_key: 'daily:USD:2026-11-25', amount_cents: 12_000 }],
    });
    // The person's rejection is a signed record naming the reviewer, the note and the event it decided.
    expect(record).toMatchObject({
      schema_version: 'payment_review.v1',
      payload: {
        ...t,
        review: 'rejected',
        reviewer: { actor: 'api_key:key_reviewer', key_id: 'key_reviewer', name: null },
        note: 'not this vendor',
        requested_amount_cents: 12_000,
        approved_amount_cents: null,
        decided_event_hash: escalation.hash,
        issuer: 'sigil.test',
        reviewed_at: '2026-11-25T10:00:00.000Z',
      },
    });
    expect(verifyRecord(record, specSignatureCheck)).toMatchObject({ valid: true, key_id: 'key-1' });
    const forged = { ...(record as { payload: object }), payload: { ...(record as { payload: object }).payload, note: 'approved after all' } };
    expect(verifyRecord(forged, specSignatureCheck)).toMatchObject({ valid: false, reason: 'hash_mismatch' });
    expect(w.store.rows('commerce_spend')).toEqual([{ organization_id: 'org_a', cap_key: 'daily:USD:2026-11-25', reserved_cents: 0, cap_cents: 100_000 }]);
    await expect(sut.execute(new RejectAuthorizationCommand('org_a', t.authorization_id, 'api_key:key_reviewer', null))).rejects.toMatchObject({
      code: 'authorization_not_pending',
      details: { status: 'rejected' },
    });
  });
});
