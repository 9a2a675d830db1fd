/**
 * The ONE contract suite every event store adapter must pass. Adapter specs call
 * `eventStoreContract(harness)`; nothing here knows which adapter it runs against.
 */
import { randomUUID } from 'node:crypto';
import { AppendsNotWritten, EventIdConflict, InvalidAppend, NewEvent, RecordedEvent, WrongExpectedVersion } from '../event-store.port';
import { SqlDatabase } from '../sql/sql-database';
import { SqlEventStore } from '../sql/sql-event-store';

export interface ContractHarness {
  /** A fresh, empty store that no other test uses. */
  open(): Promise<{ db: SqlDatabase; store: SqlEventStore }>;
  /** Drops what `open` created. */
  dispose(): Promise<void>;
}

const ev = (type: string, data: unknown = {}, extra: Partial<NewEvent> = {}): NewEvent => ({ type, data, ...extra });

/** A fresh store for one describe block: opened before its tests (then `setup`), closed after. */
export function contractStore(makeHarness: () => ContractHarness, setup?: (opened: { db: SqlDatabase; store: SqlEventStore }) => Promise<void>) {
  const opened = {} as { db: SqlDatabase; store: SqlEventStore };
  let harness: ContractHarness | undefined;
  beforeAll(async () => {
    harness = makeHarness();
    Object.assign(opened, await harness.open());
    await setup?.(opened);
  });
  afterAll(async () => {
    await opened.store?.close();
    await opened.db?.close();
    await harness?.dispose();
  });
  return opened;
}

export function eventStoreContract(adapter: string, makeHarness: () => ContractHarness): void {
  describe(`EventStore contract: ${adapter}`, () => {
    const opened = contractStore(makeHarness);
    let db: SqlDatabase;
    let store: SqlEventStore;
    beforeAll(() => ({ db, store } = opened));

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

      it('all or nothing on request: one append whose stream moved writes none of them, and says which', async () => {
        const [a, b] = [stream('whole'), stream('whole')];
        await store.append(b, [ev('B0')]);
        const refused = await store
          .appendMany(
            [
              { stream: a, events: [ev('A1')], expected: 'no_stream' },
              { stream: b, events: [ev('B1')], expected: 'no_stream' },
            ],
            { allOrNothing: true },
          )
          .catch((err: unknown) => err);
        expect(refused).toBeInstanceOf(AppendsNotWritten);
        expect((refused as AppendsNotWritten).outcomes.map((o) => o.status)).toEqual(['appended', 'wrong_expected_version']);
        expect(await store.readStream(a)).toEqual([]);
        expect(await store.readStream(b)).toHaveLength(1);
        // Without the moved stream the same write goes through whole.
        const whole = await store.appendMany([{ stream: a, events: [ev('A1')], expected: 'no_stream' }, { stream: b, events: [ev('B1')], expected: 0 }], { allOrNothing: true });
        expect(whole.map((o) => o.status)).toEqual(['appended', 'appended']);
        expect((await store.readStream(a)).map((e) => e.type)).toEqual(['A1']);
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
        // The edited type with the old one kept as hashed_type hashes as before; no rename explains it.
        const s5 = await tamperable();
        await db.query(`UPDATE events SET hashed_type = type, type = 'Forged' WHERE stream_id = $1 AND revision = 3`, [s5]);
        expect(await store.verifyStream(s5)).toMatchObject({ valid: false, broken_at_revision: 3, reason: 'hash_mismatch' });
      });
    });

  });
}
