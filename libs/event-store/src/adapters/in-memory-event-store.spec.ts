import { randomUUID } from 'node:crypto';
import { AppendsNotWritten, WrongExpectedVersion } from '../event-store.port';
import { increment, InlineProjection, ReadModelConstraintViolated, RowChange, eventFact } from '../projections/read-model';
import { InMemoryEventStore } from './in-memory-event-store';

const counts: InlineProjection = {
  name: 'counts',
  filter: { eventTypes: ['Opened', 'Closed'] },
  tables: ['orders', 'per_customer'],
  checks: [{ name: 'per_customer_limit', table: 'per_customer', holds: (row) => Number(row.n) <= 2 }],
  apply(e): RowChange[] {
    const d = e.data as { id: string; customer: string };
    if (e.type === 'Closed') return [{ op: 'update', table: 'orders', key: { id: d.id }, set: { status: 'closed', revision: eventFact('revision') } }];
    return [
      { op: 'insert', table: 'orders', key: ['id'], row: { id: d.id, status: 'open', revision: eventFact('revision'), hash: eventFact('hash') } },
      { op: 'insert', table: 'per_customer', key: ['customer'], row: { customer: d.customer, n: increment(1) }, onConflict: { update: ['n'] } },
    ];
  },
};

describe('InMemoryEventStore (the port in memory, for handler specs)', () => {
  let store: InMemoryEventStore;
  beforeEach(() => {
    store = new InMemoryEventStore(() => new Date('2026-11-25T00:00:00.000Z'));
    store.registerProjection(counts);
  });

  it('appends with expected revisions, replays an event id idempotently and keeps a verifiable hash chain', async () => {
    const s = `o-${randomUUID()}`;
    const event = { event_id: randomUUID(), type: 'Opened', data: { id: s, customer: 'c' } };
    const first = await store.append(s, [event], { expectedRevision: 'no_stream' });
    expect((await store.append(s, [event], { expectedRevision: 'no_stream' })).idempotentReplay).toBe(true);
    await expect(store.append(s, [{ type: 'Closed', data: { id: s } }], { expectedRevision: 5 })).rejects.toBeInstanceOf(WrongExpectedVersion);
    await store.append(s, [{ type: 'Closed', data: { id: s } }], { expectedRevision: 0 });
    expect(await store.verifyStream(s)).toMatchObject({ valid: true, events: 2 });
    expect(store.rows('orders')).toEqual([{ id: s, status: 'closed', revision: 1, hash: first.events[0].hash }]);
    expect(store.rows('per_customer')).toEqual([{ customer: 'c', n: 1 }]);
  });

  it("refuses an append whose read-model change breaks a projection's check, and keeps nothing of it", async () => {
    await store.appendMany([1, 2].map((i) => ({ stream: `o-${i}`, events: [{ type: 'Opened', data: { id: `o-${i}`, customer: 'c' } }] })));
    await expect(store.append('o-3', [{ type: 'Opened', data: { id: 'o-3', customer: 'c' } }])).rejects.toBeInstanceOf(ReadModelConstraintViolated);
    expect(await store.readStream('o-3')).toEqual([]);
    expect(store.rows('orders')).toHaveLength(2);
    expect(await store.rebuildProjection('counts')).toBe(2);
    expect(store.rows('per_customer')).toEqual([{ customer: 'c', n: 2 }]);
  });

  it('writes none of an all-or-nothing appendMany when one stream moved, and says which', async () => {
    await store.append('o-2', [{ type: 'Opened', data: { id: 'o-2', customer: 'c' } }]);
    const appends = [
      { stream: 'o-1', events: [{ type: 'Opened', data: { id: 'o-1', customer: 'a' } }], expected: 'no_stream' as const },
      { stream: 'o-2', events: [{ type: 'Closed', data: { id: 'o-2' } }], expected: 5 },
    ];
    const refused = await store.appendMany(appends, { allOrNothing: true }).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(AppendsNotWritten);
    expect((refused as AppendsNotWritten).outcomes.map((o) => o.status)).toEqual(['appended', 'wrong_expected_version']);
    expect(await store.readStream('o-1')).toEqual([]);
    expect(store.rows('orders').map((r) => r.id)).toEqual(['o-2']);
    // Without the flag the same call writes the one that fits.
    expect((await store.appendMany(appends)).map((o) => o.status)).toEqual(['appended', 'wrong_expected_version']);
    expect(await store.readStream('o-1')).toHaveLength(1);
  });

  it("refuses an append whose event needs another read model's row in a refused state, as committed before it", async () => {
    store.registerProjection({
      name: 'gates',
      filter: { streamPrefix: 'g-' },
      tables: ['gates'],
      apply: (e) => [{ op: 'insert', table: 'gates', key: ['id'], row: e.data as { id: string; state: string }, onConflict: { update: ['state'] } }],
    });
    store.registerProjection({
      name: 'passes',
      filter: { streamPrefix: 'p-' },
      tables: ['passes'],
      guards: [{ name: 'gate_open', table: 'gates', column: 'id', keyOf: (e) => (e.data as { gate?: string }).gate ?? null, refusedWhen: { column: 'state', values: ['shut'] } }],
      apply: (e) => [{ op: 'insert', table: 'passes', key: ['id'], row: { id: e.stream_id }, onConflict: 'nothing' }],
    });
    await store.append('g-1', [{ type: 'Gate', data: { id: 'g-1', state: 'open' } }]);
    await store.append('g-2', [{ type: 'Gate', data: { id: 'g-2', state: 'shut' } }]);
    await store.appendMany([{ stream: 'p-1', events: [{ type: 'Pass', data: { gate: 'g-1' } }] }, { stream: 'p-2', events: [{ type: 'Pass', data: { gate: 'g-9' } }] }, { stream: 'p-3', events: [{ type: 'Pass', data: {} }] }]);
    const refused = store.appendMany([{ stream: 'p-4', events: [{ type: 'Pass', data: { gate: 'g-1' } }] }, { stream: 'p-5', events: [{ type: 'Pass', data: { gate: 'g-2' } }] }]);
    await expect(refused).rejects.toMatchObject({ constraint: 'gate_open' });
    expect(store.rows('passes').map((r) => r.id)).toEqual(['p-1', 'p-2', 'p-3']);
    expect(await store.readStream('p-4')).toEqual([]);
    // Shut later: what passed before stays, and a rebuild is never refused.
    await store.append('g-1', [{ type: 'Gate', data: { id: 'g-1', state: 'shut' } }]);
    await expect(store.append('p-6', [{ type: 'Pass', data: { gate: 'g-1' } }])).rejects.toBeInstanceOf(ReadModelConstraintViolated);
    expect(await store.rebuildProjection('passes')).toBe(3);
  });

  it('reads $all in order with filters, and a subscription sees later appends', async () => {
    await store.append('o-1', [{ type: 'Opened', data: { id: 'o-1', customer: 'a' } }]);
    await store.append('x-1', [{ type: 'Other', data: {} }]);
    expect((await store.readAll({ filter: { streamPrefix: 'o-' } })).events.map((e) => e.stream_id)).toEqual(['o-1']);
    const sub = store.subscribeToAll({ fromPosition: 'end' });
    const it = sub[Symbol.asyncIterator]();
    const next = it.next();
    await store.append('o-2', [{ type: 'Opened', data: { id: 'o-2', customer: 'b' } }]);
    expect((await next).value).toMatchObject({ stream_id: 'o-2', global_position: 2 });
    await sub.stop();
  });
});
