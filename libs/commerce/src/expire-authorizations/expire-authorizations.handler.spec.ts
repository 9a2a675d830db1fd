import { commerceWorld } from '../transactions/transaction-spec-fixtures';
import { ExpireAuthorizationsCommand } from './expire-authorizations.command';
import { ExpireAuthorizationsHandler } from './expire-authorizations.handler';

describe('ExpireAuthorizationsHandler (Transaction aggregate on the in-memory store)', () => {
  it('rejects with EXPIRED, as the system, only the escalated authorizations whose window has closed', async () => {
    const w = commerceWorld();
    const sut = new ExpireAuthorizationsHandler(w.rows, w.transactions, w.clock);
    const due = await w.escalated('org_a', 1_000, '2026-11-25T10:10:00.000Z');
    const later = await w.escalated('org_a', 1_000, '2026-11-25T12:00:00.000Z');
    expect(await sut.execute(new ExpireAuthorizationsCommand())).toBe(0);
    w.clock.advance(15 * 60_000);
    expect(await sut.execute(new ExpireAuthorizationsCommand())).toBe(1);
    expect(await w.rows.byId('org_a', due.transaction_id)).toMatchObject({ status: 'rejected', reason_code: 'EXPIRED' });
    expect(await w.rows.byId('org_a', later.transaction_id)).toMatchObject({ status: 'needs_review' });
    const [e] = await w.store.readStream(`transaction-${due.transaction_id}`, { fromRevision: 2 });
    expect(e).toMatchObject({ type: 'authorization.rejected', data: { rejected_by: 'expiry', released: [{ amount_cents: 1_000 }] }, metadata: { actor: 'system:expiry-sweep' } });
    expect(await sut.execute(new ExpireAuthorizationsCommand())).toBe(0);
  });
});
