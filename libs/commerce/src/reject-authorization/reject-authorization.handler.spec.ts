import { commerceWorld } from '../transactions/transaction-spec-fixtures';
import { RejectAuthorizationCommand } from './reject-authorization.command';
import { RejectAuthorizationHandler } from './reject-authorization.handler';

describe('RejectAuthorizationHandler (Transaction aggregate on the in-memory store)', () => {
  it('records a human rejection with the note, releasing every reservation', async () => {
    const w = commerceWorld();
    const sut = new RejectAuthorizationHandler(w.rows, w.transactions, w.clock);
    const t = await w.escalated('org_a', 12_000);
    const row = await sut.execute(new RejectAuthorizationCommand('org_a', t.authorization_id, 'api_key:key_reviewer', 'not this vendor'));
    expect(row).toMatchObject({ status: 'rejected', decision: 'blocked', reason_code: 'REJECTED_BY_REVIEWER', reservations: [] });
    const [e] = await w.store.readStream(`transaction-${t.transaction_id}`, { fromRevision: 2 });
    expect(e.data).toEqual({
      ...t,
      status: 'rejected',
      decision: 'blocked',
      reason_code: 'REJECTED_BY_REVIEWER',
      rejected_by: 'human',
      approver: 'api_key:key_reviewer',
      note: 'not this vendor',
      released: [{ cap_key: 'daily:USD:2026-11-25', amount_cents: 12_000 }],
    });
    expect(w.store.rows('commerce_spend')).toEqual([{ organization_id: 'org_a', cap_key: 'daily:USD:2026-11-25', reserved_cents: 0, cap_cents: 100_000 }]);
    await expect(sut.execute(new RejectAuthorizationCommand('org_a', t.authorization_id, 'api_key:key_reviewer', null))).rejects.toMatchObject({
      code: 'authorization_not_pending',
      details: { status: 'rejected' },
    });
  });
});
