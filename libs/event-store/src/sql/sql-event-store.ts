import { randomUUID } from 'node:crypto';
import { canonicalJson } from '@app/crypto';
import {
  AppendManyOptions,
  AppendResult,
  AppendsNotWritten,
  EventIdConflict,
  ExpectedRevision,
  HeldDecision,
  HeldRow,
  Holding,
  InvalidAppend,
  NewEvent,
  RecordedEvent,
  StreamAppend,
  StreamAppendOutcome,
} from '../event-store.port';
import type { InlineProjection } from '../projections/read-model';
import {
  APPEND_MANY_PARAMS,
  APPEND_MANY_SQL,
  APPEND_PARAMS,
  APPEND_SQL,
  AppendFollowUp,
  appendFailed,
  AppendRow,
  appendStatement,
  APPENDED_ONE,
  EVENT_COLUMNS,
  EventRow,
  fragments,
  ManyAppendFollowUp,
  MAX_EVENTS_PER_APPEND,
  midFragment,
  PreparedEvent,
  prepareAll,
  tailFragment,
  toRecorded,
  validateAppend,
  wrongVersion,
} from './append-sql';
import { InlineProjections } from './inline-projections';
import { queueOf, statementName } from './read-model-sql';
import { ident } from '../projections/row-changes';
import { SqlDatabase, SqlExecutor, sqlConstraint, sqlState } from './sql-database';
import { SqlEventReads, SqlEventStoreOptions } from './sql-event-reads';

export type { AppendFollowUp, ManyAppendFollowUp } from './append-sql';
export { MAX_EVENTS_PER_APPEND } from './append-sql';
export type { SqlEventStoreOptions } from './sql-event-reads';

/** The SQL adapter (postgres via pg, embedded via PGlite): appends, inline projections, and the reads of SqlEventReads. */
export class SqlEventStore extends SqlEventReads {
  /** Read models applied in each append's own statement. */
  readonly projections = new InlineProjections();
  /** The highest position this instance has appended (committed or not): catch-up targets. */
  lastAppendedPosition = -1;
  private readonly now: () => Date;
  private readonly onAppend: SqlEventStoreOptions['onAppend'];

  constructor(db: SqlDatabase, options: SqlEventStoreOptions = {}) {
    super(db, options);
    this.now = options.now ?? (() => new Date());
    this.onAppend = options.onAppend;
  }

  registerProjection(projection: InlineProjection): void {
    this.projections.register(projection);
  }

  async appendMany(appends: StreamAppend[], options: AppendManyOptions = {}): Promise<StreamAppendOutcome[]> {
    const started = this.onAppend ? performance.now() : 0;
    try {
      const outcomes = options.allOrNothing ? await this.appendAllOrNothing(appends) : await this.appendManyIn(this.db, appends);
      if (outcomes.some((o) => o.status === 'appended')) this.announce();
      return outcomes;
    } finally {
      this.onAppend?.('append_many', (performance.now() - started) / 1000);
    }
  }

  /** The same statement in a transaction, rolled back (AppendsNotWritten thrown through it) when any append found its stream moved. */
  private appendAllOrNothing(appends: StreamAppend[]): Promise<StreamAppendOutcome[]> {
    return this.db.transaction(async (tx) => {
      const outcomes = await this.appendManyIn(tx, appends);
      if (outcomes.some((o) => o.status === 'wrong_expected_version')) throw new AppendsNotWritten(outcomes);
      return outcomes;
    });
  }

  /** Re-applies a projection to every stored event, from empty tables, in one transaction (`InlineProjections.rebuild`), again while it gives way to appends. */
  async rebuildProjection(name: string): Promise<number> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.db.transaction((tx) => this.projections.rebuild(name, tx, (from, filter) => this.readAllIn(tx, { fromPosition: from, limit: 1000, filter }, { horizon: false })));
      } catch (err) {
        // It gave way to appends (or, with a low deadlock_timeout, lost a deadlock to one): nothing of it was kept.
        if ((sqlState(err) !== '55P03' && sqlState(err) !== '40P01') || attempt === 20) throw err;
        await new Promise((r) => setTimeout(r, 20 * attempt));
      }
    }
  }

  async append(stream: string, events: NewEvent[], options: { expectedRevision?: ExpectedRevision; followUp?: AppendFollowUp } = {}): Promise<AppendResult> {
    if (!this.onAppend) return this.appendOnce(stream, events, options);
    const started = performance.now();
    try {
      return await this.appendOnce(stream, events, options);
    } finally {
      this.onAppend('append', (performance.now() - started) / 1000);
    }
  }

  private async appendOnce(stream: string, events: NewEvent[], options: { expectedRevision?: ExpectedRevision; followUp?: AppendFollowUp }): Promise<AppendResult> {
    const expected = options.expectedRevision ?? 'any';
    // Ids are fixed before the first attempt so a retry appends the very same events.
    const withIds = Array.isArray(events) ? events.map((e) => ({ ...e, event_id: e?.event_id ?? randomUUID() })) : events;

    // A unique violation on event_id means a concurrent append stored one of our ids after our
    // statement's snapshot was taken; one more attempt sees it and answers idempotently.
    for (let attempt = 0; ; attempt++) {
      try {
        // sigil_append is one statement, so autocommit makes it atomic: one round trip, no BEGIN/COMMIT.
        const result = await this.appendIn(this.db, stream, withIds, expected, options.followUp);
        if (!result.idempotentReplay) this.announce();
        return result;
      } catch (err) {
        if (attempt < 2 && sqlState(err) === '23505' && sqlConstraint(err) === 'events_event_id_key') continue;
        throw err;
      }
    }
  }

  async appendHolding<R>(stream: string, row: HeldRow | null, decide: (holding: Holding) => Promise<HeldDecision<R>>): Promise<R> {
    const { decided, appended } = await this.db.transaction(async (tx) => {
      await tx.query('SELECT 1 FROM streams WHERE stream_id = $1 FOR UPDATE', [stream]);
      let rowHeld = false;
      if (row) {
        // The queue first: appends sharing the row after this wait for it (PostgreSQL lets a new
        // sharer of a row overtake a waiting writer, not a new holder of an advisory lock).
        await tx.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [queueOf(row.queue), row.key]);
        rowHeld = (await tx.query(`SELECT 1 FROM ${ident(row.table, 'table')} WHERE ${ident(row.column, 'column')} = $1 FOR NO KEY UPDATE`, [row.key])).length > 0;
      }
      // A statement of its own: the clock is read once the row is held, not while waiting for it.
      const [{ at }] = await tx.query<{ at: Date | string }>("SELECT date_trunc('milliseconds', clock_timestamp()) + interval '1 millisecond' AS at");
      const decided = await decide({ at: new Date(at), rowHeld, within: tx });
      return { decided, appended: decided.events.length > 0 ? await this.appendIn(tx, stream, decided.events, decided.expectedRevision) : null };
    });
    if (appended && !appended.idempotentReplay) this.announce();
    return decided.result;
  }

  /**
   * The append inside a caller's transaction (it commits nothing itself). Public so a command
   * can append with other writes atomically, and so tests can hold a transaction open.
   */
  async appendIn(tx: SqlExecutor, stream: string, events: NewEvent[], expected: ExpectedRevision = 'any', followUp?: AppendFollowUp): Promise<AppendResult> {
    validateAppend(stream, events, expected);
    const prepared = prepareAll(events);
    const recordedAt = this.now().toISOString();
    const f = fragments(stream, prepared, recordedAt);
    const params: unknown[] = [stream, String(expected), f.ids, f.types, f.data, f.metadata, recordedAt, f.heads, f.mids, f.tails, ...(followUp?.params ?? [])];
    const readModels = this.projections.forAppends([{ stream, events: prepared, recordedAt }], params.length + 1);
    let sql = APPEND_SQL;
    let name: string | undefined = 'sigil_append';
    if (readModels || followUp) {
      sql = appendStatement(APPENDED_ONE, readModels?.statements ?? [], followUp ? [followUp.sql] : [], APPEND_PARAMS + 1, '', readModels?.guards);
      params.push(...(readModels?.params ?? []));
      name = followUp && !followUp.name ? undefined : statementName(`sigil_append_${followUp?.name ?? 'rm'}`, sql);
    }
    const [row] = await tx.query<AppendRow>(sql, params, name ? { name } : {}).catch(appendFailed);
    if (row.status === 'replay') return this.replay(tx, stream, prepared);
    if (row.status === 'wrong_expected_version') throw wrongVersion(stream, expected, row);
    return this.recorded(stream, prepared, recordedAt, row);
  }

  /**
   * Appends to several streams (each at most once) in one statement, one round trip
   * (`sigil_append_many`), in the caller's transaction or, given the database, atomically in
   * autocommit. Each append is checked on its own, as if appended in the order given: a wrong
   * expected revision fails that one (reported in its outcome, nothing written for it) and the
   * others go on. Stream heads are locked in stream order whatever the order given. `followUp` (one
   * or several data-modifying statements, each written only when `status = 'appended'`) sees
   * the CTE `appended` with one row per append (`ord`, 1-based in the order given, then status,
   * stream_revision, first_position, hashes, previous_hash, recorded_at).
   */
  async appendManyIn(tx: SqlExecutor, appends: StreamAppend[], followUp?: ManyAppendFollowUp): Promise<StreamAppendOutcome[]> {
    if (appends.length === 0) return [];
    const recordedAt = this.now().toISOString();
    const cols = { streams: [] as string[], expected: [] as string[], lo: [] as number[], hi: [] as number[] };
    const flat = { ids: [] as string[], types: [] as string[], data: [] as string[], metadata: [] as string[], tails: [] as string[] };
    const prepared = appends.map((a) => {
      const expected = a.expected ?? 'any';
      validateAppend(a.stream, a.events, expected);
      const p = prepareAll(a.events);
      cols.streams.push(a.stream);
      cols.expected.push(String(expected));
      cols.lo.push(flat.ids.length + 1);
      cols.hi.push(flat.ids.length + p.length);
      const streamJson = canonicalJson(a.stream);
      for (const e of p) {
        flat.ids.push(e.event_id);
        flat.types.push(e.type);
        flat.data.push(e.dataJson);
        flat.metadata.push(e.metadataJson);
        flat.tails.push(tailFragment(streamJson, e.type));
      }
      return p;
    });
    if (new Set(flat.ids).size !== flat.ids.length) throw new InvalidAppend('event ids repeat within one append');
    if (new Set(cols.streams).size !== cols.streams.length) throw new InvalidAppend('appendManyIn takes each stream at most once');
    if (flat.ids.length > MAX_EVENTS_PER_APPEND) throw new InvalidAppend(`at most ${MAX_EVENTS_PER_APPEND} events per append`);
    const followUps = followUp ? (Array.isArray(followUp.sql) ? followUp.sql : [followUp.sql]) : [];
    const params: unknown[] = [
      JSON.stringify(cols.streams),
      JSON.stringify(cols.expected),
      cols.lo,
      cols.hi,
      flat.ids,
      JSON.stringify(flat.types),
      JSON.stringify(flat.data),
      JSON.stringify(flat.metadata),
      recordedAt,
      midFragment(recordedAt),
      JSON.stringify(flat.tails),
      ...(followUp?.params ?? []),
    ];
    const readModels = this.projections.forAppends(
      appends.map((a, i) => ({ stream: a.stream, events: prepared[i], recordedAt })),
      params.length + 1,
    );
    let sql = `${APPEND_MANY_SQL} ORDER BY a.ord`;
    let name: string | undefined = 'sigil_append_many';
    if (readModels || followUp) {
      sql = appendStatement(APPEND_MANY_SQL, readModels?.statements ?? [], followUps, APPEND_MANY_PARAMS + 1, 'ORDER BY ord', readModels?.guards);
      params.push(...(readModels?.params ?? []));
      name = followUp && !followUp.name ? undefined : statementName(`sigil_append_many_${followUp?.name ?? 'rm'}`, sql);
    }
    const rows = await tx.query<AppendRow & { ord: number }>(sql, params, name ? { name } : {}).catch(appendFailed);
    const outcomes: StreamAppendOutcome[] = [];
    for (const row of rows) {
      const i = row.ord - 1;
      const { stream } = appends[i];
      if (row.status === 'appended') outcomes.push({ status: 'appended', result: this.recorded(stream, prepared[i], recordedAt, row) });
      else if (row.status === 'replay') outcomes.push({ status: 'replay', result: await this.replay(tx, stream, prepared[i]) });
      else outcomes.push({ status: 'wrong_expected_version', error: wrongVersion(stream, appends[i].expected ?? 'any', row) });
    }
    return outcomes;
  }

  /** The events an append just wrote, as stored. */
  private recorded(stream: string, prepared: PreparedEvent[], recordedAt: string, row: AppendRow): AppendResult {
    const current = Number(row.stream_revision);
    const first = Number(row.first_position);
    const hashes = row.hashes!;
    const firstRevision = current - prepared.length + 1;
    const recorded: RecordedEvent[] = prepared.map((e, i) => ({
      event_id: e.event_id,
      stream_id: stream,
      revision: firstRevision + i,
      global_position: first + i,
      type: e.type,
      data: e.data,
      metadata: e.metadata,
      recorded_at: recordedAt,
      hash: hashes[i],
      prev_hash: i === 0 ? row.previous_hash : hashes[i - 1],
    }));
    this.lastAppendedPosition = Math.max(this.lastAppendedPosition, first + prepared.length - 1);
    return { nextExpectedRevision: current, position: first + prepared.length - 1, idempotentReplay: false, events: recorded };
  }

  /** Every id already stored, in this stream, with the same content: answer as the first append did. */
  private async replay(tx: SqlExecutor, stream: string, prepared: PreparedEvent[]): Promise<AppendResult> {
    const rows = (
      await tx.query<EventRow>(`SELECT ${EVENT_COLUMNS} FROM events WHERE event_id = ANY($1::uuid[])`, [prepared.map((e) => e.event_id)])
    ).map(toRecorded);
    const byId = new Map(rows.map((r) => [r.event_id, r]));
    const mismatched = prepared.filter((e) => {
      const stored = byId.get(e.event_id);
      return !stored || stored.stream_id !== stream || stored.type !== e.type || canonicalJson(stored.data) !== e.dataJson;
    });
    if (mismatched.length > 0) {
      throw new EventIdConflict(
        mismatched.map((e) => e.event_id),
        'event ids already used by other events (different stream, type or data, or a partial replay)',
      );
    }
    const events = prepared.map((e) => byId.get(e.event_id)!);
    const last = events.reduce((a, b) => (b.global_position > a.global_position ? b : a));
    const [head] = await tx.query<{ revision: string | number }>('SELECT revision FROM streams WHERE stream_id = $1', [stream]);
    return { nextExpectedRevision: Number(head.revision), position: last.global_position, idempotentReplay: true, events };
  }

}
