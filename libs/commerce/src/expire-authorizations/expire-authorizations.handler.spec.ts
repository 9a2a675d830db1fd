import { Metrics } from '@app/metrics';
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

  it('expires an authorized transaction never executed once its window closed, releasing what it held; one being settled is left alone', async () => {
    const w = commerceWorld();
    const sut = new ExpireAuthorizationsHandler(w.rows, w.transactions, w.clock);
    const lapsed = await w.authorized('org_a', 4_000, '2026-11-25T10:10:00.000Z');
    const settling = await w.authorized('org_a', 3_000, '2026-11-25T10:10:00.000Z');
    const row = (await w.rows.byId('org_a', settling.transaction_id))!;
    await w.transactions.save({ transaction_id: settling.transaction_id, revision: Number(row.revision) }, [
      { type: 'execution.initiated', data: { ...settling, status: 'authorized', attempt: 1, provider: 'sandbox', provider_idempotency_key: settling.transaction_id, amount_cents: 3_000 }, metadata: { actor: 'api_key:key_agent' } },
    ]);
    expect(w.store.rows('commerce_spend')[0]).toMatchObject({ reserved_cents: 7_000 });
    w.clock.advance(15 * 60_000);
    expect(await sut.execute(new ExpireAuthorizationsCommand())).toBe(1);
    expect(await w.rows.byId('org_a', lapsed.transaction_id)).toMatchObject({ status: 'expired', reason_code: 'EXPIRED' });
    expect(await w.rows.byId('org_a', settling.transaction_id)).toMatchObject({ status: 'authorized', execution_state: 'settling' });
    const [anchor, e] = await w.store.readStream(`transaction-${lapsed.transaction_id}`, { direction: 'backwards', limit: 2 });
    expect(anchor).toMatchObject({ type: 'timeline.anchored', data: { status: 'expired', anchor: { payload: { terminal_status: 'expired', last_event_hash: e.hash } } } });
    expect(e).toMatchObject({ type: 'authorization.rejected', data: { status: 'expired', rejected_by: 'expiry', released: [{ amount_cents: 4_000 }] }, metadata: { actor: 'system:expiry-sweep' } });
    expect(w.store.rows('commerce_spend')[0]).toMatchObject({ reserved_cents: 3_000 });
  });

  it('releases only the approved amount of an authorization a reviewer lowered', async () => {
    const w = commerceWorld();
    const sut = new ExpireAuthorizationsHandler(w.rows, w.transactions, w.clock);
    const t = await w.escalated('org_a', 10_000, '2026-11-25T10:10:00.000Z');
    const row = (await w.rows.byId('org_a', t.transaction_id))!;
    await w.transactions.save({ transaction_id: t.transaction_id, revision: Number(row.revision) }, [
      {
        type: 'authorization.human_approved',
        data: { ...t, status: 'authorized', approver: 'api_key:key_reviewer', note: null, amount_cents: 6_000, released: [{ cap_key: 'daily:USD:2026-11-25', amount_cents: 4_000 }] },
        metadata: { actor: 'api_key:key_reviewer' },
      },
    ]);
    expect(w.store.rows('commerce_spend')[0]).toMatchObject({ reserved_cents: 6_000 });
    w.clock.advance(15 * 60_000);
    expect(await sut.execute(new ExpireAuthorizationsCommand())).toBe(1);
    expect(w.store.rows('commerce_spend')[0]).toMatchObject({ reserved_cents: 0 });
    expect(await w.rows.byId('org_a', t.transaction_id)).toMatchObject({ status: 'expired' });
  });

  it('counts what it expired in the metrics, and nothing when nothing was due', async () => {
    const w = commerceWorld();
    const metrics = new Metrics({ defaultMetrics: false });
    const sut = new ExpireAuthorizationsHandler(w.rows, w.transactions, w.clock, metrics);
    await w.escalated('org_a', 1_000, '2026-11-25T10:10:00.000Z');
    await w.authorized('org_a', 2_000, '2026-11-25T10:10:00.000Z');
    expect(await sut.execute(new ExpireAuthorizationsCommand())).toBe(0);
    w.clock.advance(15 * 60_000);
    expect(await sut.execute(new ExpireAuthorizationsCommand())).toBe(2);
    expect((await metrics.scrape()).body).toMatch(/^sigil_authorization_expiries_total 2$/m);
  });
});
