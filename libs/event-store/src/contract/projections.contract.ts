/**
 * The inline-projection part of the contract every adapter passes: a read model registered by
 * name is written with its events (single and batched appends), never for replays or refused
 * appends, with the event facts the store fills in, and is rebuilt from `$all` to the same rows.
 */
import { randomUUID } from 'node:crypto';
import { EventStore } from '../event-store.port';
import { eventFact, increment, InlineProjection, ReadModelConstraintViolated, RowChange } from '../projections/read-model';
import type { SqlDatabase } from '../sql/sql-database';
import { ContractHarness, contractStore } from './event-store.contract';

interface OrderRow {
  order_id: string;
  status: string;
  total: string | number;
  revision: string | number;
  position: string | number;
  last_hash: string;
  opened_at: Date | string;
}

/** Orders: opened, paid, cancelled (deleted); and a per-customer counter limited by a CHECK constraint. */
const ordersProjection: InlineProjection = {
  name: 'contract_orders',
  filter: { streamPrefix: 'order-' },
  tables: ['contract_orders', 'contract_order_counts'],
  apply(e): RowChange[] {
    const d = e.data as { order_id: string; customer?: string; total?: number };
    const facts = { revision: eventFact('revision'), position: eventFact('global_position'), last_hash: eventFact('hash') };
    switch (e.type) {
      case 'OrderOpened':
        return [
          { op: 'insert', table: 'contract_orders', key: ['order_id'], row: { order_id: d.order_id, status: 'open', total: d.total ?? 0, opened_at: e.recorded_at, ...facts } },
          { op: 'insert', table: 'contract_order_counts', key: ['customer'], row: { customer: d.customer ?? 'anon', orders: increment(1) }, onConflict: { update: ['orders'] } },
        ];
      case 'OrderPaid':
        return [{ op: 'update', table: 'contract_orders', key: { order_id: d.order_id }, set: { status: 'paid', ...facts } }];
      case 'OrderCancelled':
        return [{ op: 'delete', table: 'contract_orders', key: { order_id: d.order_id } }];
      default:
        return [];
    }
  },
};

export function projectionsContract(adapter: string, makeHarness: () => ContractHarness): void {
  describe(`EventStore contract, inline projections: ${adapter}`, () => {
    const fresh = contractStore(makeHarness, async ({ db, store }) => {
      await db.exec(`
        CREATE TABLE contract_orders (order_id text PRIMARY KEY, status text NOT NULL, total bigint NOT NULL, revision bigint NOT NULL,
          position bigint NOT NULL, last_hash text NOT NULL, opened_at timestamptz NOT NULL);
        CREATE TABLE contract_order_counts (customer text PRIMARY KEY, orders integer NOT NULL DEFAULT 0,
          CONSTRAINT contract_order_counts_limit CHECK (orders <= 3));
      `);
      store.registerProjection(ordersProjection);
    });
    let db: SqlDatabase;
    let store: EventStore;
    beforeAll(() => ({ db, store } = fresh));

    const order = async (id: string) => (await db.query<OrderRow>('SELECT * FROM contract_orders WHERE order_id = $1', [id]))[0];
    const count = async (customer: string) => Number((await db.query<{ orders: number }>('SELECT orders FROM contract_order_counts WHERE customer = $1', [customer]))[0]?.orders ?? 0);
    const opened = (orderId: string, customer: string, total = 100) => ({ type: 'OrderOpened', data: { order_id: orderId, customer, total } });

    it('writes the rows of a single append with it, with the facts the store assigned', async () => {
      const id = randomUUID();
      const customer = `c-${randomUUID()}`;
      const result = await store.append(`order-${id}`, [opened(id, customer, 250)], { expectedRevision: 'no_stream' });
      const row = await order(id);
      const [e] = result.events;
      expect(row).toMatchObject({ status: 'open', last_hash: e.hash });
      expect(Number(row.total)).toBe(250);
      expect(Number(row.revision)).toBe(0);
      expect(Number(row.position)).toBe(e.global_position);
      expect(new Date(row.opened_at).toISOString()).toBe(e.recorded_at);
      expect(await count(customer)).toBe(1);
    });

    it('folds several events of one append into one row (an insert then an update) with the last event facts', async () => {
      const id = randomUUID();
      const result = await store.append(`order-${id}`, [opened(id, `c-${randomUUID()}`), { type: 'OrderPaid', data: { order_id: id } }], { expectedRevision: 'no_stream' });
      const row = await order(id);
      expect(row.status).toBe('paid');
      expect(Number(row.revision)).toBe(1);
      expect(Number(row.position)).toBe(result.events[1].global_position);
      expect(row.last_hash).toBe(result.events[1].hash);
    });

    it('updates at a known revision and deletes', async () => {
      const id = randomUUID();
      await store.append(`order-${id}`, [opened(id, `c-${randomUUID()}`)], { expectedRevision: 'no_stream' });
      const paid = await store.append(`order-${id}`, [{ type: 'OrderPaid', data: { order_id: id } }], { expectedRevision: 0 });
      expect(Number((await order(id)).revision)).toBe(1);
      expect((await order(id)).last_hash).toBe(paid.events[0].hash);
      await store.append(`order-${id}`, [{ type: 'OrderCancelled', data: { order_id: id } }], { expectedRevision: 1 });
      expect(await order(id)).toBeUndefined();
    });

    it('writes nothing for an idempotent replay or a wrong expected revision', async () => {
      const id = randomUUID();
      const customer = `c-${randomUUID()}`;
      const event = { ...opened(id, customer), event_id: randomUUID() };
      await store.append(`order-${id}`, [event], { expectedRevision: 'no_stream' });
      const replay = await store.append(`order-${id}`, [event], { expectedRevision: 'no_stream' });
      expect(replay.idempotentReplay).toBe(true);
      expect(await count(customer)).toBe(1);
      const other = randomUUID();
      await expect(store.append(`order-${id}`, [opened(other, customer)], { expectedRevision: 5 })).rejects.toThrow('expected revision');
      expect(await order(other)).toBeUndefined();
      expect(await count(customer)).toBe(1);
    });

    it('appendMany writes every appended stream and its rows, adding up a counter several streams touch', async () => {
      const customer = `c-${randomUUID()}`;
      const ids = [randomUUID(), randomUUID()];
      const taken = randomUUID();
      await store.append(`order-${taken}`, [opened(taken, `c-${randomUUID()}`)]);
      const outcomes = await store.appendMany([
        ...ids.map((id) => ({ stream: `order-${id}`, events: [opened(id, customer)], expected: 'no_stream' as const })),
        { stream: `order-${taken}`, events: [opened(randomUUID(), customer)], expected: 'no_stream' as const },
      ]);
      expect(outcomes.map((o) => o.status)).toEqual(['appended', 'appended', 'wrong_expected_version']);
      for (const id of ids) expect((await order(id)).status).toBe('open');
      expect(await count(customer)).toBe(2);
    });

    it("undoes the append when a read model's constraint refuses its change, and says which constraint", async () => {
      const customer = `c-${randomUUID()}`;
      for (let i = 0; i < 3; i++) await store.append(`order-${randomUUID()}`, [opened(randomUUID(), customer)]);
      const id = randomUUID();
      const refused = store.append(`order-${id}`, [opened(id, customer)], { expectedRevision: 'no_stream' });
      await expect(refused).rejects.toBeInstanceOf(ReadModelConstraintViolated);
      await expect(store.append(`order-${randomUUID()}`, [opened(randomUUID(), customer)])).rejects.toMatchObject({ constraint: 'contract_order_counts_limit' });
      expect(await store.readStream(`order-${id}`)).toEqual([]);
      expect(await order(id)).toBeUndefined();
      expect(await count(customer)).toBe(3);
      const batch = store.appendMany([{ stream: `order-${id}`, events: [opened(id, `c-${randomUUID()}`)] }, { stream: `order-${randomUUID()}`, events: [opened(randomUUID(), customer)] }]);
      await expect(batch).rejects.toBeInstanceOf(ReadModelConstraintViolated);
      expect(await store.readStream(`order-${id}`)).toEqual([]);
    });

    it('rebuilds from $all to the very same rows', async () => {
      const [a, b] = [randomUUID(), randomUUID()];
      await store.append(`order-${a}`, [opened(a, 'rebuild'), { type: 'OrderPaid', data: { order_id: a } }]);
      await store.append(`order-${b}`, [opened(b, 'rebuild')]);
      await store.append(`order-${b}`, [{ type: 'OrderCancelled', data: { order_id: b } }]);
      const before = await db.query('SELECT * FROM contract_orders ORDER BY order_id');
      const counts = await db.query('SELECT * FROM contract_order_counts ORDER BY customer');
      await db.query(`UPDATE contract_orders SET status = 'tampered'`);
      const applied = await store.rebuildProjection('contract_orders');
      expect(applied).toBeGreaterThan(0);
      expect(await db.query('SELECT * FROM contract_orders ORDER BY order_id')).toEqual(before);
      expect(await db.query('SELECT * FROM contract_order_counts ORDER BY customer')).toEqual(counts);
    });

    it('deletes a row several appends of one appendMany delete, each only if written', async () => {
      const [a, b] = [randomUUID(), randomUUID()];
      await store.append(`order-${a}`, [opened(a, `c-${randomUUID()}`)]);
      await store.append(`order-${b}`, [opened(b, `c-${randomUUID()}`)]);
      const cancel = (id: string) => ({ type: 'OrderCancelled', data: { order_id: id } });
      const outcomes = await store.appendMany([
        { stream: `order-${a}`, events: [cancel(a)], expected: 0 },
        { stream: `order-${randomUUID()}`, events: [cancel(a)], expected: 'no_stream' },
        { stream: `order-${b}`, events: [cancel(b)], expected: 7 },
        { stream: `order-${randomUUID()}`, events: [cancel(b)], expected: 3 },
      ]);
      expect(outcomes.map((o) => o.status)).toEqual(['appended', 'appended', 'wrong_expected_version', 'wrong_expected_version']);
      expect(await order(a)).toBeUndefined();
      expect((await order(b)).status).toBe('open');
    });

    it('rebuilds a row that was deleted and written again', async () => {
      const id = randomUUID();
      await store.append(`order-${id}`, [opened(id, `c-${randomUUID()}`, 1)]);
      await store.append(`order-${id}`, [{ type: 'OrderCancelled', data: { order_id: id } }]);
      await store.append(`order-${id}`, [opened(id, `c-${randomUUID()}`, 2), { type: 'OrderPaid', data: { order_id: id } }]);
      const before = await order(id);
      expect(before.status).toBe('paid');
      await store.rebuildProjection('contract_orders');
      expect(await order(id)).toEqual(before);
    });

    it('gives each table one writer', () => {
      expect(() => store.registerProjection({ ...ordersProjection, name: 'contract_orders_again' })).toThrow('is written by projection contract_orders');
      expect(() => store.registerProjection({ ...ordersProjection, tables: [] })).toThrow('registered already');
      expect(() => store.registerProjection(ordersProjection)).not.toThrow(); // the very same one: a no-op
    });
  });
}
