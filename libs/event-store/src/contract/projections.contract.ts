/**
 * The inline-projection part of the contract every adapter passes: a read model registered by
 * name is written with its events (single and batched appends), never for replays or refused
 * appends, with the event facts the store fills in, and is rebuilt from `$all` to the same rows.
 */
import { randomUUID } from 'node:crypto';
import { EventStore } from '../event-store.port';
import { eventFact, increment, InlineProjection, ReadModelConstraintViolated, RowChange } from '../projections/read-model';
import type { SqlDatabase } from '../sql/sql-database';
import type { SqlEventStore } from '../sql/sql-event-store';
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

/** PostgreSQL: whether an append's statement is waiting for a row lock (polled for up to 2 s). */
async function waitingOnALock(db: SqlDatabase): Promise<boolean> {
  for (let i = 0; i < 100; i++) {
    const [{ n }] = await db.query<{ n: string | number }>(
      `SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database() AND query LIKE 'WITH appended AS MATERIALIZED%'`,
    );
    if (Number(n) > 0) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return false;
}

/** PostgreSQL: whether someone waits for an advisory lock of `queue` (a guard's queue) in `mode` (polled for up to 2 s). */
async function waitingInQueue(db: SqlDatabase, queue: number, mode: 'ShareLock' | 'ExclusiveLock'): Promise<boolean> {
  for (let i = 0; i < 100; i++) {
    const [{ n }] = await db.query<{ n: string | number }>(
      "SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND classid = $1 AND objsubid = 2 AND mode = $2 AND NOT granted",
      [queue, mode],
    );
    if (Number(n) > 0) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return false;
}

/** Locks (another read model) and the orders that need theirs open: a row guard. */
const locksProjection: InlineProjection = {
  name: 'contract_locks',
  filter: { streamPrefix: 'lock-' },
  tables: ['contract_locks'],
  apply(e): RowChange[] {
    const d = e.data as { lock_id: string; state: string };
    return [{ op: 'insert', table: 'contract_locks', key: ['lock_id'], row: { lock_id: d.lock_id, state: d.state }, onConflict: { update: ['state'] } }];
  },
};
const CONTRACT_QUEUE = 4242;
const guardedOrdersProjection: InlineProjection = {
  name: 'contract_guarded_orders',
  filter: { streamPrefix: 'guarded-' },
  tables: ['contract_guarded_orders'],
  guards: [
    {
      name: 'contract_lock_open',
      table: 'contract_locks',
      column: 'lock_id',
      keyOf: (e) => (e.type === 'OrderOpened' ? ((e.data as { lock_id?: string }).lock_id ?? null) : null),
      refusedWhen: { column: 'state', values: ['closed', 'broken'] },
      queue: CONTRACT_QUEUE,
    },
  ],
  apply(e): RowChange[] {
    const d = e.data as { order_id: string };
    return [{ op: 'insert', table: 'contract_guarded_orders', key: ['order_id'], row: { order_id: d.order_id }, onConflict: 'nothing' }];
  },
};

export function projectionsContract(adapter: string, makeHarness: () => ContractHarness): void {
  describe(`EventStore contract, row guards: ${adapter}`, () => {
    const fresh = contractStore(makeHarness, async ({ db, store }) => {
      await db.exec(`
        CREATE TABLE contract_locks (lock_id uuid PRIMARY KEY, state text NOT NULL);
        CREATE TABLE contract_guarded_orders (order_id text PRIMARY KEY);
      `);
      store.registerProjection(locksProjection);
      store.registerProjection(guardedOrdersProjection);
    });
    let db: SqlDatabase;
    let store: SqlEventStore;
    beforeAll(() => ({ db, store } = fresh));

    const lock = async (state: string, lockId = randomUUID()) => (await store.append(`lock-${lockId}`, [{ type: 'LockSet', data: { lock_id: lockId, state } }]), lockId);
    const opened = (lockId: string | null, orderId = randomUUID()) => ({ type: 'OrderOpened', data: { order_id: orderId, ...(lockId ? { lock_id: lockId } : {}) } });
    const orders = async (ids: string[]) => (await db.query<{ order_id: string }>('SELECT order_id FROM contract_guarded_orders WHERE order_id = ANY($1)', [ids])).map((r) => r.order_id);

    it('refuses a whole append, single or batched, whose event needs a row in a refused state, and writes nothing of it', async () => {
      const [open, closed] = [await lock('open'), await lock('closed')];
      const id = randomUUID();
      const refused = store.append(`guarded-${id}`, [opened(closed, id)], { expectedRevision: 'no_stream' });
      await expect(refused).rejects.toBeInstanceOf(ReadModelConstraintViolated);
      await expect(store.append(`guarded-${id}`, [opened(closed, id)])).rejects.toMatchObject({ constraint: 'contract_lock_open' });
      expect(await store.readStream(`guarded-${id}`)).toEqual([]);
      const ids = [randomUUID(), randomUUID(), randomUUID()];
      const batch = store.appendMany([
        { stream: `guarded-${ids[0]}`, events: [opened(open, ids[0])] },
        { stream: `guarded-${ids[1]}`, events: [opened(closed, ids[1])] },
        { stream: `guarded-${ids[2]}`, events: [opened(open, ids[2])] },
      ]);
      await expect(batch).rejects.toMatchObject({ constraint: 'contract_lock_open' });
      for (const i of ids) expect(await store.readStream(`guarded-${i}`)).toEqual([]);
      expect(await orders([id, ...ids])).toEqual([]);
    });

    it('lets through what needs a row in another state, no row, or nothing, many naming one row at once', async () => {
      const open = await lock('open');
      const ids = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
      const outcomes = await store.appendMany([
        { stream: `guarded-${ids[0]}`, events: [opened(open, ids[0])] },
        { stream: `guarded-${ids[1]}`, events: [opened(open, ids[1])] },
        { stream: `guarded-${ids[2]}`, events: [opened(randomUUID(), ids[2])] },
        { stream: `guarded-${ids[3]}`, events: [opened(null, ids[3])] },
      ]);
      expect(outcomes.map((o) => o.status)).toEqual(['appended', 'appended', 'appended', 'appended']);
      expect((await orders(ids)).sort()).toEqual([...ids].sort());
    });

    it('reads the row as committed when the append commits: a change of it waits for the append or refuses it', async () => {
      const lockId = await lock('open');
      await store.append(`guarded-${randomUUID()}`, [opened(lockId)]);
      // The row's change holds it until its transaction commits; the append begun meanwhile then sees it.
      const id = randomUUID();
      let pending!: Promise<unknown>;
      await db.transaction(async (tx) => {
        await store.appendIn(tx, `lock-${lockId}`, [{ type: 'LockSet', data: { lock_id: lockId, state: 'broken' } }]);
        pending = store.append(`guarded-${id}`, [opened(lockId, id)]).catch((err: unknown) => err);
        if (db.kind === 'postgres') {
          // PostgreSQL: the append is there, waiting for the row (PGlite runs one statement at a time).
          expect(await waitingOnALock(db)).toBe(true);
        }
      });
      expect(await pending).toMatchObject({ constraint: 'contract_lock_open' });
      expect(await store.readStream(`guarded-${id}`)).toEqual([]);
    });

    it('a guard with a queue lets no append overtake a writer that queued for the row first', async () => {
      const lockId = await lock('open');
      const id = randomUUID();
      let pending!: Promise<unknown>;
      await db.transaction(async (tx) => {
        // The writer's turn: queued first, then its change of the row.
        await tx.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [CONTRACT_QUEUE, lockId]);
        pending = store.append(`guarded-${id}`, [opened(lockId, id)]).catch((err: unknown) => err);
        if (db.kind === 'postgres') {
          // Nobody holds the row: without the queue the append would share it and commit at once.
          expect(await waitingInQueue(db, CONTRACT_QUEUE, 'ShareLock')).toBe(true);
        }
        await store.appendIn(tx, `lock-${lockId}`, [{ type: 'LockSet', data: { lock_id: lockId, state: 'closed' } }]);
      });
      expect(await pending).toMatchObject({ constraint: 'contract_lock_open' });
      expect(await orders([id])).toEqual([]);
    });

    it('guards only the appends written, and never a rebuild', async () => {
      const lockId = await lock('open');
      const before = randomUUID();
      await store.append(`guarded-${before}`, [{ ...opened(lockId, before), event_id: randomUUID() }]);
      const [stored] = await store.readStream(`guarded-${before}`);
      await lock('closed', lockId);
      // A replay of what was written while the row was open, and an append that is not written, are not refused.
      const replay = await store.append(`guarded-${before}`, [{ event_id: stored.event_id, type: stored.type, data: stored.data }]);
      expect(replay.idempotentReplay).toBe(true);
      const other = randomUUID();
      const outcomes = await store.appendMany([
        { stream: `guarded-${before}`, events: [opened(lockId)], expected: 'no_stream' },
        { stream: `guarded-${other}`, events: [opened(null, other)] },
      ]);
      expect(outcomes.map((o) => o.status)).toEqual(['wrong_expected_version', 'appended']);
      await store.rebuildProjection('contract_guarded_orders');
      expect((await orders([before, other])).sort()).toEqual([before, other].sort());
    });
  });


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
