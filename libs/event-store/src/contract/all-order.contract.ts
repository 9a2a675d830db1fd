/**
 * The contract's `$all` part (split from event-store.contract.ts, which it shares the harness with).
 */
import { randomUUID } from 'node:crypto';
import { NewEvent, RecordedEvent } from '../event-store.port';
import { SqlDatabase, SqlExecutor } from '../sql/sql-database';
import { SqlEventStore } from '../sql/sql-event-store';
import { Projection, ProjectionApplyFailed, ProjectionRunner } from '../projections/projection-runner';
import { ContractHarness, contractStore } from './event-store.contract';


const ev = (type: string, data: unknown = {}, extra: Partial<NewEvent> = {}): NewEvent => ({ type, data, ...extra });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * `$all` shows an event once every older transaction has finished, including other clients' on
 * the same server (other test files run in parallel). Wait for that instead of assuming it.
 */
async function visible(store: SqlEventStore, position: number, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await store.headPosition()) <= position) {
    if (Date.now() > deadline) throw new Error(`position ${position} not visible within ${timeoutMs} ms`);
    await sleep(10);
  }
}

/** Collects a subscription's events in the background. */
function collect(store: SqlEventStore, fromPosition: number | 'end' = 0, filter?: { eventTypes?: string[]; streamPrefix?: string }) {
  const sub = store.subscribeToAll({ fromPosition, filter, batchSize: 250 });
  const seen: RecordedEvent[] = [];
  const done = (async () => {
    for await (const e of sub) seen.push(e);
  })();
  return {
    seen,
    async until(pred: (seen: RecordedEvent[]) => boolean, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      while (!pred(seen)) {
        if (Date.now() > deadline) throw new Error(`subscription saw ${seen.length} events before the timeout`);
        await sleep(10);
      }
    },
    async stop() {
      await sub.stop();
      await done;
    },
  };
}

/** The `$all` half of the contract: global order without gaps, catch-up subscriptions, the checkpointed projection runner. */
export function allOrderContract(adapter: string, makeHarness: () => ContractHarness): void {
  describe(`EventStore contract, $all and projection runners: ${adapter}`, () => {
    const opened = contractStore(makeHarness);
    let db: SqlDatabase;
    let store: SqlEventStore;
    beforeAll(() => ({ db, store } = opened));


    describe('$all order', () => {
      it('pages readAll in increasing position and filters by type and stream prefix without rescanning', async () => {
        const start = await store.headPosition();
        const prefix = `page-${randomUUID()}`;
        let last = 0;
        for (let i = 0; i < 30; i++) last = (await store.append(`${prefix}-${i % 3}`, [ev(i % 2 ? 'Odd' : 'Even', { i })])).position;
        await visible(store, last);
        let from = start;
        const all: RecordedEvent[] = [];
        for (;;) {
          const page = await store.readAll({ fromPosition: from, limit: 7 });
          all.push(...page.events);
          if (page.events.length < 7) break;
          expect(page.nextPosition).toBe(page.events[6].global_position + 1);
          from = page.nextPosition;
        }
        const mine = all.filter((e) => e.stream_id.startsWith(prefix));
        expect(mine.map((e) => (e.data as { i: number }).i)).toEqual(Array.from({ length: 30 }, (_, i) => i));
        const positions = all.map((e) => e.global_position);
        expect(positions).toEqual([...positions].sort((a, b) => a - b));

        const odd = await store.readAll({ fromPosition: start, filter: { eventTypes: ['Odd'], streamPrefix: `${prefix}-1` } });
        expect(odd.events.map((e) => (e.data as { i: number }).i)).toEqual([1, 7, 13, 19, 25]);
        const none = await store.readAll({ fromPosition: start, filter: { eventTypes: ['NoSuchType'] } });
        expect(none.events).toEqual([]);
        expect(none.nextPosition).toBeGreaterThan(all[all.length - 1].global_position);
        // LIKE wildcards in a prefix are literal.
        expect((await store.readAll({ fromPosition: start, filter: { streamPrefix: 'page-%' } })).events).toEqual([]);
      });

      it('delivers every event exactly once, in increasing position, to a subscriber started before 8 concurrent writers of 1,000 events each', async () => {
        const prefix = `w8-${randomUUID()}`;
        const sub = collect(store, await store.headPosition(), { streamPrefix: prefix });
        const writers = Array.from({ length: 8 }, async (_, w) => {
          let written = 0;
          let batch = 0;
          while (written < 1000) {
            // Single events and small batches, spread over a few streams per writer.
            const n = Math.min(1 + (batch % 4), 1000 - written);
            await store.append(
              `${prefix}-${w}-${batch % 5}`,
              Array.from({ length: n }, (_, k) => ev('Tick', { w, i: written + k })),
            );
            written += n;
            batch++;
          }
        });
        await Promise.all(writers);
        await sub.until((seen) => seen.length >= 8000, 60_000);
        await sleep(300);
        await sub.stop();
        expect(sub.seen).toHaveLength(8000);
        expect(new Set(sub.seen.map((e) => e.event_id)).size).toBe(8000);
        for (let i = 1; i < sub.seen.length; i++) expect(sub.seen[i].global_position).toBeGreaterThan(sub.seen[i - 1].global_position);
        for (let w = 0; w < 8; w++) {
          const mine = sub.seen.filter((e) => (e.data as { w: number }).w === w).map((e) => (e.data as { i: number }).i);
          expect(mine).toHaveLength(1000);
          expect(new Set(mine).size).toBe(1000);
        }
      }, 120_000);

      it('does not skip a transaction held open while a later one commits', async () => {
        const prefix = `held-${randomUUID()}`;
        const from = await store.headPosition();
        const sub = collect(store, from, { streamPrefix: prefix });
        let release!: () => void;
        const gate = new Promise<void>((r) => (release = r));
        let heldAppended!: () => void;
        const appended = new Promise<void>((r) => (heldAppended = r));
        const held = db.transaction(async (tx: SqlExecutor) => {
          await store.appendIn(tx, `${prefix}-early`, [ev('Early')]);
          heldAppended();
          await gate;
        });
        await appended;

        // A checkpointing reader polls while the early transaction is open.
        let checkpoint = from;
        const polled: RecordedEvent[] = [];
        const poll = async () => {
          const page = await store.readAll({ fromPosition: checkpoint, filter: { streamPrefix: prefix } });
          polled.push(...page.events);
          checkpoint = page.nextPosition;
        };
        const later = store.append(`${prefix}-late`, [ev('Late')]);
        // PostgreSQL commits the later append now; PGlite (one session) queues it, and the polls,
        // behind the held transaction. So the polls run as a chain we only race against a timer.
        await Promise.race([later, sleep(300)]);
        const pollsWhileOpen = poll()
          .then(() => sleep(150))
          .then(poll);
        await Promise.race([pollsWhileOpen, sleep(600)]);
        release();
        await held;
        await later;
        await pollsWhileOpen;
        // Another session's open transaction on the same server (a parallel suite) may hold the
        // visibility horizon back a little longer: poll on until both are visible. A reader that
        // had skipped Early would never see it, however long it polls.
        for (const deadline = Date.now() + 10_000; polled.length < 2 && Date.now() < deadline; await sleep(50)) await poll();
        await sub.until((seen) => seen.length >= 2);
        await sleep(200);
        await sub.stop();

        expect(polled.map((e) => e.type).sort()).toEqual(['Early', 'Late']);
        expect(sub.seen.map((e) => e.type).sort()).toEqual(['Early', 'Late']);
        expect(sub.seen[1].global_position).toBeGreaterThan(sub.seen[0].global_position);
        expect(polled[1].global_position).toBeGreaterThan(polled[0].global_position);
      });

      it('is not stalled by a rolled-back transaction', async () => {
        const prefix = `rb-${randomUUID()}`;
        const sub = collect(store, await store.headPosition(), { streamPrefix: prefix });
        await expect(
          db.transaction(async (tx: SqlExecutor) => {
            await store.appendIn(tx, `${prefix}-gone`, [ev('Gone')]);
            throw new Error('abort');
          }),
        ).rejects.toThrow('abort');
        await store.append(`${prefix}-kept`, [ev('Kept')]);
        await sub.until((seen) => seen.length >= 1, 5_000);
        await sleep(200);
        await sub.stop();
        expect(sub.seen.map((e) => e.type)).toEqual(['Kept']);
        expect(await store.readStream(`${prefix}-gone`)).toEqual([]);
      });

      it("starts a subscription at 'end' with only new events", async () => {
        const prefix = `end-${randomUUID()}`;
        await visible(store, (await store.append(`${prefix}-a`, [ev('Old')])).position);
        const sub = collect(store, 'end', { streamPrefix: prefix });
        await sleep(100);
        await store.append(`${prefix}-a`, [ev('New')]);
        await sub.until((seen) => seen.length >= 1, 5_000);
        await sub.stop();
        expect(sub.seen.map((e) => e.type)).toEqual(['New']);
      });
    });

    describe('projection runner', () => {
      const countingProjection = (name: string, prefix: string, crashAfter?: { count: number }): Projection => ({
        name,
        filter: { streamPrefix: prefix },
        async apply(event, tx) {
          if (crashAfter) {
            if (crashAfter.count === 0) throw new Error('process killed mid-batch');
            crashAfter.count--;
          }
          await tx.query(
            `INSERT INTO test_projection_applied (projection, event_id, applied) VALUES ($1, $2, 1)
             ON CONFLICT (projection, event_id) DO UPDATE SET applied = test_projection_applied.applied + 1`,
            [name, event.event_id],
          );
        },
      });

      beforeAll(async () => {
        await db.exec(`CREATE TABLE IF NOT EXISTS test_projection_applied (projection text, event_id uuid, applied int NOT NULL, PRIMARY KEY (projection, event_id))`);
      });

      const appliedCounts = async (name: string) =>
        (await db.query<{ applied: number }>('SELECT applied FROM test_projection_applied WHERE projection = $1', [name])).map((r) => Number(r.applied));

      it('applies each event exactly once across kills between and within batches and restarts', async () => {
        const prefix = `proj-${randomUUID()}`;
        const name = `p-${randomUUID()}`;
        let last = 0;
        for (let i = 0; i < 40; i++) {
          last = (await store.append(`${prefix}-${i % 4}`, Array.from({ length: 25 }, (_, k) => ev('Item', { i, k })))).position;
        }
        await visible(store, last);

        // First life: two batches commit, then the process dies between batches.
        const first = new ProjectionRunner(db, store, countingProjection(name, prefix), { batchSize: 100 });
        expect(await first.runBatch()).toBe(100);
        expect(await first.runBatch()).toBe(100);
        expect(await appliedCounts(name)).toHaveLength(200);

        // Second life: dies in the middle of a batch, after applying 37 of its events.
        const second = new ProjectionRunner(db, store, countingProjection(name, prefix, { count: 37 }), { batchSize: 100 });
        await expect(second.runBatch()).rejects.toThrow('process killed mid-batch');
        expect(await appliedCounts(name)).toHaveLength(200);

        // Third life: two runners restart side by side and catch up.
        const a = new ProjectionRunner(db, store, countingProjection(name, prefix), { batchSize: 64 });
        const b = new ProjectionRunner(db, store, countingProjection(name, prefix), { batchSize: 64 });
        await Promise.all([a.catchUp(), b.catchUp()]);

        const counts = await appliedCounts(name);
        expect(counts).toHaveLength(1000);
        expect(counts.every((c) => c === 1)).toBe(true);
      });

      it('hands a batch-applying projection whole batches, and moves past ranges with nothing for it without applying', async () => {
        const prefix = `batch-${randomUUID()}`;
        const name = `p-${randomUUID()}`;
        const batches: number[] = [];
        const projection: Projection = {
          ...countingProjection(name, prefix),
          async applyBatch(events, tx) {
            batches.push(events.length);
            for (const e of events) await this.apply(e, tx);
          },
        };
        let last = 0;
        for (let i = 0; i < 5; i++) last = (await store.append(`${prefix}-${i}`, Array.from({ length: 10 }, (_, k) => ev('Item', { i, k })))).position;
        await visible(store, last);
        const runner = new ProjectionRunner(db, store, projection, { batchSize: 20 });
        await runner.catchUp();
        expect(batches).toEqual([20, 20, 10]);
        expect(await appliedCounts(name)).toHaveLength(50);
        // Only others' events since: the checkpoint moves on, nothing is applied.
        const before = await runner.checkpoint();
        const other = await store.append(`other-${randomUUID()}`, [ev('Item')]);
        await visible(store, other.position);
        expect(await runner.runBatch()).toBe(0);
        expect(await runner.checkpoint()).toBeGreaterThan(Math.max(before, other.position));
        expect(batches).toEqual([20, 20, 10]);
      });

      it('a poison event (its apply throws) is never skipped: the events before it commit, it is named, and once fixed it applies once', async () => {
        const prefix = `poison-${randomUUID()}`;
        const name = `p-${randomUUID()}`;
        const written = await store.append(`${prefix}-a`, Array.from({ length: 30 }, (_, k) => ev('Item', { k })));
        await visible(store, written.position);
        const poison = written.events[17];
        let fixed = false;
        const counting = countingProjection(name, prefix);
        const projection: Projection = {
          ...counting,
          async apply(event, tx) {
            if (event.event_id === poison.event_id && !fixed) throw new Error('cannot apply this one');
            await counting.apply(event, tx);
          },
        };
        const runner = new ProjectionRunner(db, store, projection, { batchSize: 50 });
        await expect(runner.runBatch()).rejects.toThrow('cannot apply this one');
        // Retried one event at a time: the 17 good ones before it commit, then it fails, named, every time.
        for (let i = 0; i < 17; i++) expect(await runner.runBatch()).toBe(1);
        for (let i = 0; i < 2; i++) {
          const err = await runner.runBatch().then(() => null, (e: unknown) => e);
          expect(err).toBeInstanceOf(ProjectionApplyFailed);
          expect(err).toMatchObject({ projection: name, event: { event_id: poison.event_id, global_position: poison.global_position } });
        }
        expect(await runner.checkpoint()).toBe(poison.global_position);
        expect(await appliedCounts(name)).toHaveLength(17);
        // Fixed (a new release): it and everything after it apply, each once.
        fixed = true;
        await runner.catchUp();
        const counts = await appliedCounts(name);
        expect(counts).toHaveLength(30);
        expect(counts.every((c) => c === 1)).toBe(true);
      });

      it('keeps up live when started, and stops cleanly', async () => {
        const prefix = `live-${randomUUID()}`;
        const name = `p-${randomUUID()}`;
        const runner = new ProjectionRunner(db, store, countingProjection(name, prefix), { batchSize: 50, idleWaitMs: 50 });
        runner.start();
        for (let i = 0; i < 20; i++) await store.append(`${prefix}-x`, [ev('Item', { i })]);
        const deadline = Date.now() + 10_000;
        while ((await appliedCounts(name)).length < 20 && Date.now() < deadline) await sleep(20);
        await runner.stop();
        const counts = await appliedCounts(name);
        expect(counts).toHaveLength(20);
        expect(counts.every((c) => c === 1)).toBe(true);
      });
    });
  });
}
