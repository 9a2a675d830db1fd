import { ExpireAuthorizationsCommand } from '../expire-authorizations/expire-authorizations.command';
import { ExpireAuthorizationsHandler } from '../expire-authorizations/expire-authorizations.handler';
import { checkTimelineAnchor } from '../domain/timeline-anchor';
import { verifyRecord } from '../receipts/signed-record';
import { TransactionRepository } from '../transactions/transaction.repository';
import { commerceWorld, specSignatureCheck } from '../transactions/transaction-spec-fixtures';
import { AnchorTimelinesCommand } from './anchor-timelines.command';
import { AnchorTimelinesHandler } from './anchor-timelines.handler';

describe('AnchorTimelinesHandler (the anchoring sweep and backfill, on the in-memory store)', () => {
  const verify = (r: unknown) => verifyRecord(r, specSignatureCheck);

  it("anchors the expiries a key-less worker recorded, once, and then nothing more", async () => {
    const w = commerceWorld();
    // The worker role's repository: no signing key, so it writes the expiry and no anchor.
    const worker = new ExpireAuthorizationsHandler(w.rows, new TransactionRepository(w.store), w.clock);
    const a = await w.escalated('org_a', 1_000, '2026-11-25T10:10:00.000Z');
    const b = await w.authorized('org_a', 2_000, '2026-11-25T10:10:00.000Z');
    const open = await w.escalated('org_a', 1_000, '2026-11-26T00:00:00.000Z');
    w.clock.advance(15 * 60_000);
    expect(await worker.execute(new ExpireAuthorizationsCommand())).toBe(2);
    const stream = (id: string) => w.store.readStream(`transaction-${id}`);
    expect(checkTimelineAnchor(await stream(a.transaction_id), verify)).toMatchObject({ valid: false, state: 'missing' });

    const sut = new AnchorTimelinesHandler(w.rows, w.transactions);
    expect(await sut.execute(new AnchorTimelinesCommand(1))).toBe(2); // pages of one: every page is read
    for (const [id, status] of [[a.transaction_id, 'rejected'], [b.transaction_id, 'expired']]) {
      expect(checkTimelineAnchor(await stream(id), verify)).toMatchObject({ valid: true, state: 'anchored', terminal_status: status });
      expect(await w.rows.byId('org_a', id)).toMatchObject({ status, anchored_revision: (await stream(id)).length - 1 });
    }
    expect((await stream(open.transaction_id)).map((e) => e.type)).not.toContain('timeline.anchored');
    expect(await sut.execute(new AnchorTimelinesCommand())).toBe(0);
    expect((await stream(a.transaction_id)).filter((e) => e.type === 'timeline.anchored')).toHaveLength(1);
  });

  it('one transaction, as a read that finds it unanchored asks: only when it is terminal and never anchored', async () => {
    const w = commerceWorld();
    const worker = new ExpireAuthorizationsHandler(w.rows, new TransactionRepository(w.store), w.clock);
    const t = await w.escalated('org_a', 1_000, '2026-11-25T10:10:00.000Z');
    const sut = new AnchorTimelinesHandler(w.rows, w.transactions);
    const one = new AnchorTimelinesCommand(1, { orgId: 'org_a', transactionId: t.transaction_id });
    expect(await sut.execute(one)).toBe(0); // still open
    w.clock.advance(15 * 60_000);
    await worker.execute(new ExpireAuthorizationsCommand());
    expect(await sut.execute(new AnchorTimelinesCommand(1, { orgId: 'org_b', transactionId: t.transaction_id }))).toBe(0); // another organization's id
    expect(await sut.execute(one)).toBe(1);
    expect(await sut.execute(one)).toBe(0);
  });

  it('racing anchorers (a save and the sweep, or two processes) write one anchor', async () => {
    const w = commerceWorld();
    const worker = new ExpireAuthorizationsHandler(w.rows, new TransactionRepository(w.store), w.clock);
    const t = await w.escalated('org_a', 1_000, '2026-11-25T10:10:00.000Z');
    w.clock.advance(15 * 60_000);
    await worker.execute(new ExpireAuthorizationsCommand());
    const sut = new AnchorTimelinesHandler(w.rows, w.transactions);
    const counts = await Promise.all([sut.execute(new AnchorTimelinesCommand()), sut.execute(new AnchorTimelinesCommand()), w.transactions.anchorIfTerminal(t.transaction_id)]);
    expect(counts.map(Number).reduce((x, y) => x + y, 0)).toBe(1);
    const events = await w.store.readStream(`transaction-${t.transaction_id}`);
    expect(events.filter((e) => e.type === 'timeline.anchored')).toHaveLength(1);
    expect(checkTimelineAnchor(events, verify)).toMatchObject({ valid: true, state: 'anchored' });
  });
});
