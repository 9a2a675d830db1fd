/**
 * The ONE contract suite every event store adapter must pass. Adapter specs call
 * `eventStoreContract(harness)`; nothing here knows which adapter it runs against.
 */
import { randomUUID } from 'node:crypto';
import { EventIdConflict, InvalidAppend, NewEvent, RecordedEvent, WrongExpectedVersion } from '../event-store.port';
import { SqlDatabase, SqlExecutor } from '../sql/sql-database';
import { SqlEventStore } from '../sql/sql-event-store';
import { Projection, ProjectionRunner } from '../projections/projection-runner';

export interface ContractHarness {
  /** A fresh, empty store that no other test uses. */
  open(): Promise<{ db: SqlDatabase; store: SqlEventStore }>;
  /** Drops what `open` created. */
  dispose(): Promise<void>;
}

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

export function eventStoreContract(adapter: string, makeHarness: () => ContractHarness): void {
  describe(`EventStore contract: ${adapter}`, () => {
    let harness: ContractHarness;
    let db: SqlDatabase;
    let store: SqlEventStore;

    beforeAll(async () => {
      harness = makeHarness();
      ({ db, store } = await harness.open());
    });
    afterAll(async () => {
      await store?.close();
      await db?.close();
      await harness?.dispose();
    });

    const stream = (prefix = 's') => `${prefix}-${randomUUID()}`;

    describe('append and readStream', () => {
      it('numbers revisions from 0 and returns them with hashes, metadata and recorded_at', async () => {
        const s = stream();
        const first = await store.append(s, [ev('Opened', { n: 1 }, { metadata: { actor: 'u1', correlation_id: 'c1' } })], {
          expectedRevision: 'no_stream',
        });
        expect(first.nextExpectedRevision).toBe(0);
        const second = await store.append(s, [ev('Changed', { n: 2 }), ev('Changed', { n: 3 })], { expectedRevision: 0 });
        expect(second.nextExpectedRevision).toBe(2);
        expect(second.position).toBeGreaterThan(first.position);

        const events = await store.readStream(s);
        expect(events.map((e) => [e.revision, e.type, e.data])).toEqual([
          [0, 'Opened', { n: 1 }],
          [1, 'Changed', { n: 2 }],
          [2, 'Changed', { n: 3 }],
        ]);
        expect(events[0].metadata).toEqual({ actor: 'u1', correlation_id: 'c1' });
        expect(events[0].prev_hash).toBeNull();
        expect(events[1].prev_hash).toBe(events[0].hash);
        expect(events[2].prev_hash).toBe(events[1].hash);
        for (const e of events) {
          expect(e.hash).toMatch(/^sha256:[0-9a-f]{64}$/);
          expect(new Date(e.recorded_at).toISOString()).toBe(e.recorded_at);
        }
        expect(events.map((e) => e.global_position)).toEqual([first.position, ...second.events.map((x) => x.global_position)]);
      });

      it('round-trips awkward JSON exactly: unicode, NUL, big and small numbers, nesting', async () => {
        const s = stream();
        const data = { text: 'nul\u0000 € 😀 "q" \\ \n', n: [0, -0.5, 1e21, 5e-324, 9007199254740991], deep: { a: [{ b: null }] } };
        await store.append(s, [ev('Odd', data)]);
        const [e] = await store.readStream(s);
        expect(e.data).toEqual({ ...data, n: [0, -0.5, 1e21, 5e-324, 9007199254740991] });
        expect((await store.verifyStream(s)).valid).toBe(true);
      });

      it('rejects what it cannot store faithfully, writing nothing', async () => {
        const s = stream();
        await expect(store.append(s, [ev('Bad', { x: NaN })])).rejects.toBeInstanceOf(InvalidAppend);
        await expect(store.append(s, [ev('Bad', { x: '\ud800' })])).rejects.toBeInstanceOf(InvalidAppend);
        await expect(store.append(s, [])).rejects.toBeInstanceOf(InvalidAppend);
        await expect(store.append('', [ev('A')])).rejects.toBeInstanceOf(InvalidAppend);
        await expect(store.append(s, [ev('')])).rejects.toBeInstanceOf(InvalidAppend);
        await expect(store.append(s, [ev('A', {}, { event_id: 'not-a-uuid' })])).rejects.toBeInstanceOf(InvalidAppend);
        await expect(store.append(s, [ev('A')], { expectedRevision: -3 })).rejects.toBeInstanceOf(InvalidAppend);
        const id = randomUUID();
        await expect(store.append(s, [ev('A', {}, { event_id: id }), ev('B', {}, { event_id: id })])).rejects.toBeInstanceOf(InvalidAppend);
        expect(await store.readStream(s)).toEqual([]);
        await expect(store.append(s, [ev('A')], { expectedRevision: 'no_stream' })).resolves.toMatchObject({ nextExpectedRevision: 0 });
      });

      it('reads forwards and backwards from a revision, with a limit', async () => {
        const s = stream();
        await store.append(s, Array.from({ length: 10 }, (_, i) => ev('E', { i })));
        const revs = (es: RecordedEvent[]) => es.map((e) => e.revision);
        expect(revs(await store.readStream(s, { fromRevision: 4 }))).toEqual([4, 5, 6, 7, 8, 9]);
        expect(revs(await store.readStream(s, { fromRevision: 4, limit: 3 }))).toEqual([4, 5, 6]);
        expect(revs(await store.readStream(s, { direction: 'backwards' }))).toEqual([9, 8, 7, 6, 5, 4, 3, 2, 1, 0]);
        expect(revs(await store.readStream(s, { direction: 'backwards', fromRevision: 4 }))).toEqual([4, 3, 2, 1, 0]);
        expect(revs(await store.readStream(s, { direction: 'backwards', fromRevision: 6, limit: 2 }))).toEqual([6, 5]);
        expect(await store.readStream(stream('missing'))).toEqual([]);
      });
    });

    describe('append with a read-model follow-up in the same statement', () => {
      it('writes the follow-up only when the events are appended, never on a conflict or a replay', async () => {
        await db.exec('CREATE TABLE IF NOT EXISTS contract_follow_up (stream_id text PRIMARY KEY, revision bigint NOT NULL, note text NOT NULL)');
        const s = `follow-${randomUUID()}`;
        const followUp = { sql: `INSERT INTO contract_follow_up (stream_id, revision, note) SELECT :1::text, stream_revision, :2::text FROM appended WHERE status = 'appended'`, params: [s, 'first'] };
        const first = ev('Opened', { n: 1 }, { event_id: randomUUID() });
        const result = await store.append(s, [first], { expectedRevision: 'no_stream', followUp });
        expect(await db.query(`SELECT revision::int AS revision, note FROM contract_follow_up WHERE stream_id = $1`, [s])).toEqual([{ revision: 0, note: 'first' }]);
        // A replay of the same event id appends nothing, so the follow-up does not run again.
        const replay = await store.append(s, [first], { expectedRevision: 'no_stream', followUp });
        expect(replay.idempotentReplay).toBe(true);
        expect(replay.position).toBe(result.position);
        // A conflict fails the statement: neither the event nor the row is written.
        await expect(store.append(s, [ev('Again')], { expectedRevision: 'no_stream', followUp: { ...followUp, params: [`${s}-x`, 'second'] } })).rejects.toBeInstanceOf(WrongExpectedVersion);
        expect(await db.query(`SELECT note FROM contract_follow_up WHERE stream_id = $1`, [`${s}-x`])).toEqual([]);
        expect(await store.readStream(s)).toHaveLength(1);
        // A follow-up that fails takes the append down with it.
        await expect(store.append(`${s}-y`, [ev('Opened')], { expectedRevision: 'no_stream', followUp: { ...followUp, params: [s, 'duplicate key'] } })).rejects.toThrow();
        expect(await store.readStream(`${s}-y`)).toHaveLength(0);
      });
    });

    describe('appendManyIn: several streams in one statement', () => {
      it('appends to each stream as its own append (revisions, hash chains, positions), in one statement', async () => {
        const a = stream('many "quoted" \\ é');
        const b = stream('many');
        await store.append(b, [ev('Opened')]);
        const awkward = { text: 'nul\u0000 € 😀 "q" \\ \n', n: [0, -0.5, 1e21] };
        const outcomes = await store.appendManyIn(db, [
          { stream: a, events: [ev('A1', awkward, { metadata: { actor: 'a "b"' } }), ev('A2', { n: 2 })], expected: 'no_stream' },
          { stream: b, events: [ev('B1', { n: 3 })], expected: 0 },
        ]);
        expect(outcomes.map((o) => o.status)).toEqual(['appended', 'appended']);
        const [ra, rb] = outcomes.map((o) => (o.status === 'wrong_expected_version' ? null : o.result))!;
        expect(ra!.nextExpectedRevision).toBe(1);
        expect(rb!.nextExpectedRevision).toBe(1);
        expect(rb!.events[0].global_position).toBeGreaterThan(ra!.events[1].global_position);
        expect(await store.readStream(a)).toEqual(ra!.events);
        expect((await store.readStream(b))[1]).toEqual(rb!.events[0]);
        expect((await store.verifyStream(a)).valid).toBe(true);
        expect((await store.verifyStream(b)).valid).toBe(true);
        // Later appends chain on as usual.
        await store.append(a, [ev('A3')], { expectedRevision: 1 });
        expect((await store.verifyStream(a)).valid).toBe(true);
      });

      it('fails only the append whose expected revision is wrong; replays answer idempotently; the follow-up sees which is which', async () => {
        await db.exec('CREATE TABLE IF NOT EXISTS contract_many_follow_up (stream_id text PRIMARY KEY, revision bigint NOT NULL)');
        await db.exec('CREATE TABLE IF NOT EXISTS contract_many_follow_up_2 (stream_id text PRIMARY KEY)');
        const [a, b, c] = [stream('many'), stream('many'), stream('many')];
        const replayed = ev('C1', {}, { event_id: randomUUID() });
        await store.append(c, [replayed]);
        const followUp = {
          sql: [
            `INSERT INTO contract_many_follow_up (stream_id, revision)
             SELECT s.stream, appended.stream_revision FROM appended JOIN unnest(:1::text[]) WITH ORDINALITY AS s(stream, ord) USING (ord)
             WHERE appended.status = 'appended'`,
            `INSERT INTO contract_many_follow_up_2 (stream_id)
             SELECT s.stream FROM appended JOIN unnest(:1::text[]) WITH ORDINALITY AS s(stream, ord) USING (ord) WHERE appended.status = 'appended'`,
          ],
          params: [[a, b, c]],
        };
        const outcomes = await store.appendManyIn(
          db,
          [
            { stream: a, events: [ev('A1')], expected: 'no_stream' },
            { stream: b, events: [ev('B1')], expected: 4 },
            { stream: c, events: [replayed], expected: 'any' },
          ],
          followUp,
        );
        expect(outcomes[0].status).toBe('appended');
        expect(outcomes[1]).toMatchObject({ status: 'wrong_expected_version' });
        expect(outcomes[1].status === 'wrong_expected_version' && outcomes[1].error).toBeInstanceOf(WrongExpectedVersion);
        expect(outcomes[2]).toMatchObject({ status: 'replay', result: { idempotentReplay: true, nextExpectedRevision: 0 } });
        expect(await store.readStream(b)).toEqual([]);
        expect(await store.readStream(c)).toHaveLength(1);
        const rows = await db.query<{ stream_id: string; revision: string | number }>('SELECT stream_id, revision FROM contract_many_follow_up WHERE stream_id = ANY($1)', [[a, b, c]]);
        expect(rows.map((r) => [r.stream_id, Number(r.revision)])).toEqual([[a, 0]]);
        expect(await db.query('SELECT stream_id FROM contract_many_follow_up_2 WHERE stream_id = ANY($1)', [[a, b, c]])).toEqual([{ stream_id: a }]);
      });

      it('commits or rolls back with the caller\'s transaction', async () => {
        const s = stream('many');
        await expect(
          db.transaction(async (tx) => {
            await store.appendManyIn(tx, [{ stream: s, events: [ev('A')] }]);
            throw new Error('roll back');
          }),
        ).rejects.toThrow('roll back');
        expect(await store.readStream(s)).toEqual([]);
        await db.transaction((tx) => store.appendManyIn(tx, [{ stream: s, events: [ev('A')] }, { stream: `${s}-2`, events: [ev('B')] }]));
        expect(await store.readStream(s)).toHaveLength(1);
        expect(await store.readStream(`${s}-2`)).toHaveLength(1);
      });

      it('refuses invalid input before writing anything', async () => {
        const s = stream('many');
        const id = randomUUID();
        await expect(store.appendManyIn(db, [{ stream: s, events: [ev('A')] }, { stream: '', events: [ev('B')] }])).rejects.toBeInstanceOf(InvalidAppend);
        await expect(store.appendManyIn(db, [{ stream: s, events: [ev('A', {}, { event_id: id })] }, { stream: `${s}-2`, events: [ev('B', {}, { event_id: id })] }])).rejects.toBeInstanceOf(
          InvalidAppend,
        );
        await expect(store.appendManyIn(db, [{ stream: s, events: [ev('A')] }, { stream: s, events: [ev('B')] }])).rejects.toBeInstanceOf(InvalidAppend);
        expect(await store.readStream(s)).toEqual([]);
        expect(await store.appendManyIn(db, [])).toEqual([]);
      });
    });

    describe('optimistic concurrency', () => {
      it('lets exactly one of two writers with the same expected revision win', async () => {
        const s = stream();
        await store.append(s, [ev('A')]);
        for (let round = 0; round < 5; round++) {
          const expected = round;
          const results = await Promise.allSettled([
            store.append(s, [ev('W1', { round })], { expectedRevision: expected }),
            store.append(s, [ev('W2', { round })], { expectedRevision: expected }),
          ]);
          const won = results.filter((r) => r.status === 'fulfilled');
          const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
          expect(won).toHaveLength(1);
          expect(lost).toHaveLength(1);
          expect(lost[0].reason).toBeInstanceOf(WrongExpectedVersion);
          expect(lost[0].reason).toMatchObject({ stream: s, expected, actual: expected + 1 });
        }
        expect((await store.readStream(s)).map((e) => e.revision)).toEqual([0, 1, 2, 3, 4, 5]);
      });

      it('lets exactly one of many no_stream creators create the stream', async () => {
        const s = stream();
        const results = await Promise.allSettled(
          Array.from({ length: 10 }, (_, i) => store.append(s, [ev('Created', { i })], { expectedRevision: 'no_stream' })),
        );
        expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
        for (const r of results.filter((x): x is PromiseRejectedResult => x.status === 'rejected')) {
          expect(r.reason).toBeInstanceOf(WrongExpectedVersion);
          expect(r.reason.actual).toBe(0);
        }
        expect(await store.readStream(s)).toHaveLength(1);
      });

      it('checks stream_exists and numeric revisions against a missing stream, creating nothing', async () => {
        const s = stream();
        await expect(store.append(s, [ev('A')], { expectedRevision: 'stream_exists' })).rejects.toMatchObject({ actual: 'no_stream' });
        await expect(store.append(s, [ev('A')], { expectedRevision: 0 })).rejects.toBeInstanceOf(WrongExpectedVersion);
        await store.append(s, [ev('A')], { expectedRevision: 'no_stream' });
        await expect(store.append(s, [ev('B')], { expectedRevision: 'no_stream' })).rejects.toMatchObject({ actual: 0 });
        await expect(store.append(s, [ev('B')], { expectedRevision: 'stream_exists' })).resolves.toMatchObject({ nextExpectedRevision: 1 });
      });
    });

    describe('idempotent append', () => {
      it('stores an event id once and answers a repeat with the first result', async () => {
        const s = stream();
        const e = ev('Paid', { amount: 100 }, { event_id: randomUUID() });
        const first = await store.append(s, [e], { expectedRevision: 'no_stream' });
        // The same request retried (e.g. after a lost response) still carries expectedRevision no_stream.
        const again = await store.append(s, [e], { expectedRevision: 'no_stream' });
        expect(first.idempotentReplay).toBe(false);
        expect(again.idempotentReplay).toBe(true);
        expect(again.position).toBe(first.position);
        expect(again.events[0].hash).toBe(first.events[0].hash);
        expect(await store.readStream(s)).toHaveLength(1);
      });

      it('stores once when the same append races itself', async () => {
        const s = stream();
        const batch = [ev('A', { a: 1 }, { event_id: randomUUID() }), ev('B', { b: 2 }, { event_id: randomUUID() })];
        const results = await Promise.all(Array.from({ length: 6 }, () => store.append(s, batch)));
        expect(results.filter((r) => !r.idempotentReplay)).toHaveLength(1);
        expect(new Set(results.map((r) => r.position)).size).toBe(1);
        expect((await store.readStream(s)).map((e) => e.type)).toEqual(['A', 'B']);
      });

      it('refuses an event id reused for other content or in another stream', async () => {
        const s = stream();
        const id = randomUUID();
        await store.append(s, [ev('A', { v: 1 }, { event_id: id })]);
        await expect(store.append(s, [ev('A', { v: 2 }, { event_id: id })])).rejects.toBeInstanceOf(EventIdConflict);
        await expect(store.append(stream(), [ev('A', { v: 1 }, { event_id: id })])).rejects.toBeInstanceOf(EventIdConflict);
        await expect(store.append(s, [ev('A', { v: 1 }, { event_id: id }), ev('New')])).rejects.toBeInstanceOf(EventIdConflict);
        expect(await store.readStream(s)).toHaveLength(1);
      });
    });

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
        await poll();
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

    describe('hash chain', () => {
      const tamperable = async () => {
        const s = stream('chain');
        for (let i = 0; i < 5; i++) await store.append(s, [ev('Step', { i, amount: 100 * i })]);
        expect(await store.verifyStream(s)).toMatchObject({ valid: true, events: 5 });
        return s;
      };

      it('reports the first broken link when a row is edited with SQL', async () => {
        const s = await tamperable();
        await db.query(`UPDATE events SET data = '{"amount":999,"i":2}' WHERE stream_id = $1 AND revision = 2`, [s]);
        expect(await store.verifyStream(s)).toMatchObject({ valid: false, broken_at_revision: 2, reason: 'hash_mismatch' });
      });

      it('catches an edit whose hash was recomputed, at the next link', async () => {
        const s = await tamperable();
        const [row] = await store.readStream(s, { fromRevision: 2, limit: 1 });
        const { eventHash } = await import('../hash-chain');
        const forgedData = { i: 2, amount: 1 };
        const forged = eventHash({ ...row, data: forgedData });
        await db.query(`UPDATE events SET data = $2::json, hash = $3 WHERE stream_id = $1 AND revision = 2`, [s, JSON.stringify(forgedData), forged]);
        expect(await store.verifyStream(s)).toMatchObject({ valid: false, broken_at_revision: 3, reason: 'prev_hash_mismatch' });
      });

      it('catches edited metadata, type and timestamps, and removed events', async () => {
        const s1 = await tamperable();
        await db.query(`UPDATE events SET metadata = '{"actor":"mallory"}' WHERE stream_id = $1 AND revision = 0`, [s1]);
        expect(await store.verifyStream(s1)).toMatchObject({ valid: false, broken_at_revision: 0, reason: 'hash_mismatch' });
        const s2 = await tamperable();
        await db.query(`UPDATE events SET recorded_at = recorded_at - interval '1 day' WHERE stream_id = $1 AND revision = 4`, [s2]);
        expect(await store.verifyStream(s2)).toMatchObject({ valid: false, broken_at_revision: 4, reason: 'hash_mismatch' });
        const s3 = await tamperable();
        await db.query(`DELETE FROM events WHERE stream_id = $1 AND revision = 1`, [s3]);
        expect(await store.verifyStream(s3)).toMatchObject({ valid: false, broken_at_revision: 2, reason: 'revision_gap' });
        const s4 = await tamperable();
        await db.query(`DELETE FROM events WHERE stream_id = $1 AND revision = 4`, [s4]);
        expect(await store.verifyStream(s4)).toMatchObject({ valid: false, reason: 'revision_gap' });
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
