import { randomUUID } from 'node:crypto';
import { canonicalJson, CanonicalizationError } from '@app/crypto';
import {
  AllSubscription,
  AppendResult,
  ChainVerdict,
  EventIdConflict,
  EventMetadata,
  EventStore,
  ExpectedRevision,
  InvalidAppend,
  NewEvent,
  ReadAllOptions,
  ReadAllPage,
  ReadStreamOptions,
  RecordedEvent,
  SubscribeOptions,
  WrongExpectedVersion,
} from '../event-store.port';
import { verifyChain } from '../hash-chain';
import { SqlDatabase, SqlExecutor, sqlConstraint, sqlState } from './sql-database';

/**
 * Global order without visibility gaps.
 *
 * A sequence-assigned position can commit out of order: a reader that saw position 7 may
 * later find position 5 committed, and a checkpoint at 7 would skip it. So a position is
 * `(xid << 16) + n`, where xid is the appending transaction's id, and `$all` readers only see
 * rows below `pg_snapshot_xmin(pg_current_snapshot()) << 16`: every transaction below xmin has
 * finished, and every transaction still to commit has an xid >= xmin, so nothing can appear
 * below a position a reader has already passed. This is the xid/xmin rule Emmett and Marten
 * use, folded into one index-friendly bigint. Positions are increasing but not dense, like
 * KurrentDB's log positions. A transaction holds at most 65,536 events; 2^47 xids fit in a
 * safe JS integer.
 */
const POSITION_SHIFT = 16;
export const MAX_EVENTS_PER_APPEND = 10_000;
const MAX_STREAM_ID_LENGTH = 256;
const MAX_TYPE_LENGTH = 128;
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const NOTIFY_CHANNEL = 'sigil_events';

const EVENT_COLUMNS = 'global_position, event_id, stream_id, revision, type, data, metadata, recorded_at, hash, prev_hash';

const APPEND_SQL = `SELECT status, stream_revision, first_position, hashes, previous_hash
  FROM sigil_append($1, $2, $3::uuid[], $4::text[], $5::text[], $6::text[], $7::timestamptz, $8::text[], $9::text[], $10::text[])`;

/**
 * A read-model write that rides in the append's own statement: `sql` is one data-modifying
 * statement that may read the CTE `appended` (columns status, stream_revision, first_position,
 * hashes, previous_hash) and must write only when `status = 'appended'`. Its parameters are
 * written `:1`, `:2`, … . One statement in autocommit is atomic, so the event and its read model
 * commit together in one round trip, without BEGIN and COMMIT.
 */
export interface AppendFollowUp {
  sql: string;
  params: unknown[];
  /** Prepared-statement name (hot paths). */
  name?: string;
}

function withFollowUp(followUp: AppendFollowUp): string {
  const sql = followUp.sql.replace(/:(\d+)\b/g, (_, n: string) => `$${10 + Number(n)}`);
  return `WITH appended AS MATERIALIZED (${APPEND_SQL}), follow_up AS (${sql}) SELECT * FROM appended`;
}

/**
 * `sigil_append_many`: each append's events are the slice [lo:hi] of the flattened arrays. Text
 * arrays travel as JSON arrays (JSON.stringify is native; pg's array literals escape in JS).
 */
const jsonTexts = (n: number) => `ARRAY(SELECT json_array_elements_text($${n}::json))`;
const APPEND_MANY_SQL = `SELECT a.ord, a.status, a.stream_revision, a.first_position, a.hashes, a.previous_hash, $9::timestamptz AS recorded_at
  FROM sigil_append_many(${jsonTexts(1)}, ${jsonTexts(2)}, $3::int[], $4::int[], $5::uuid[], ${jsonTexts(6)}, ${jsonTexts(7)}, ${jsonTexts(8)},
                         $9::timestamptz, $10::text, ${jsonTexts(11)}) a`;
const APPEND_MANY_PARAMS = 11;

/** `appendManyIn`'s read-model writes: one or more statements, sharing the parameters `:1`, `:2`, … */
export interface ManyAppendFollowUp extends Omit<AppendFollowUp, 'sql'> {
  sql: string | string[];
}

/** One append of `appendManyIn`. */
export interface StreamAppend {
  stream: string;
  events: NewEvent[];
  expected?: ExpectedRevision;
}

/** What became of one append of `appendManyIn`: a wrong expected revision fails that append alone. */
export type StreamAppendOutcome =
  | { status: 'appended' | 'replay'; result: AppendResult }
  | { status: 'wrong_expected_version'; error: WrongExpectedVersion };

interface AppendRow {
  status: 'appended' | 'replay' | 'wrong_expected_version';
  stream_revision: string | number;
  first_position: string | number | null;
  hashes: string[] | null;
  previous_hash: string | null;
}

const BOUNDARY_SQL = `pg_snapshot_xmin(pg_current_snapshot())::text::bigint << ${POSITION_SHIFT}`;

interface EventRow {
  global_position: string | number;
  event_id: string;
  stream_id: string;
  revision: string | number;
  type: string;
  data: unknown;
  metadata: EventMetadata;
  recorded_at: Date | string;
  hash: string;
  prev_hash: string | null;
}

function toRecorded(row: EventRow): RecordedEvent {
  return {
    event_id: row.event_id,
    stream_id: row.stream_id,
    revision: Number(row.revision),
    global_position: Number(row.global_position),
    type: row.type,
    data: row.data,
    metadata: row.metadata,
    recorded_at: row.recorded_at instanceof Date ? row.recorded_at.toISOString() : new Date(row.recorded_at).toISOString(),
    hash: row.hash,
    prev_hash: row.prev_hash,
  };
}

interface PreparedEvent {
  event_id: string;
  type: string;
  data: unknown;
  metadata: EventMetadata;
  dataJson: string;
  metadataJson: string;
}

export interface SqlEventStoreOptions {
  /** How often live subscriptions poll when no wake-up arrives (other processes, held transactions). */
  pollIntervalMs?: number;
  now?: () => Date;
}

export class SqlEventStore extends EventStore {
  private readonly waiters = new Set<() => void>();
  private notifyTimer: NodeJS.Timeout | null = null;
  private unlisten: Promise<() => Promise<void>> | null = null;
  private closed = false;
  /** The highest position this instance has appended (committed or not): catch-up targets. */
  lastAppendedPosition = -1;
  private readonly pollIntervalMs: number;
  private readonly now: () => Date;

  constructor(
    readonly db: SqlDatabase,
    options: SqlEventStoreOptions = {},
  ) {
    super();
    this.pollIntervalMs = options.pollIntervalMs ?? 100;
    this.now = options.now ?? (() => new Date());
  }

  async append(stream: string, events: NewEvent[], options: { expectedRevision?: ExpectedRevision; followUp?: AppendFollowUp } = {}): Promise<AppendResult> {
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

  /**
   * The append inside a caller's transaction (it commits nothing itself). Public so a command
   * can append with other writes atomically, and so tests can hold a transaction open.
   */
  async appendIn(tx: SqlExecutor, stream: string, events: NewEvent[], expected: ExpectedRevision = 'any', followUp?: AppendFollowUp): Promise<AppendResult> {
    validateAppend(stream, events, expected);
    const prepared = prepareAll(events);
    const recordedAt = this.now().toISOString();
    const f = fragments(stream, prepared, recordedAt);
    const [row] = await tx
      .query<AppendRow>(
        followUp ? withFollowUp(followUp) : APPEND_SQL,
        [stream, String(expected), f.ids, f.types, f.data, f.metadata, recordedAt, f.heads, f.mids, f.tails, ...(followUp?.params ?? [])],
        followUp ? (followUp.name ? { name: `sigil_append_${followUp.name}` } : {}) : { name: 'sigil_append' },
      )
      .catch(tooManyEvents);
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
    const sql = followUp
      ? `WITH appended AS MATERIALIZED (${APPEND_MANY_SQL}), ${followUps
          .map((f, i) => `follow_up_${i} AS (${f.replace(/:(\d+)\b/g, (_, n: string) => `$${APPEND_MANY_PARAMS + Number(n)}`)})`)
          .join(', ')}
         SELECT * FROM appended ORDER BY ord`
      : `${APPEND_MANY_SQL} ORDER BY a.ord`;
    const rows = await tx
      .query<AppendRow & { ord: number }>(
        sql,
        [
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
        ],
        followUp?.name ? { name: `sigil_append_many_${followUp.name}` } : followUp ? {} : { name: 'sigil_append_many' },
      )
      .catch(tooManyEvents);
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

  async readStream(stream: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    const backwards = options.direction === 'backwards';
    const limit = clampLimit(options.limit, 100_000);
    const from = options.fromRevision ?? (backwards ? Number.MAX_SAFE_INTEGER : 0);
    const rows = await this.db.query<EventRow>(
      `SELECT ${EVENT_COLUMNS} FROM events WHERE stream_id = $1 AND revision ${backwards ? '<=' : '>='} $2
       ORDER BY revision ${backwards ? 'DESC' : 'ASC'} LIMIT $3`,
      [stream, from, limit],
    );
    return rows.map(toRecorded);
  }

  async readAll(options: ReadAllOptions = {}): Promise<ReadAllPage> {
    return this.readAllIn(this.db, options);
  }

  async readAllIn(executor: SqlExecutor, options: ReadAllOptions = {}): Promise<ReadAllPage> {
    const from = Math.max(0, options.fromPosition ?? 0);
    const limit = clampLimit(options.limit, 10_000, 1000);
    const params: unknown[] = [from, limit];
    let where = '';
    if (options.filter?.eventTypes?.length) {
      params.push(options.filter.eventTypes);
      where += ` AND e.type = ANY($${params.length}::text[])`;
    }
    if (options.filter?.streamPrefix) {
      params.push(options.filter.streamPrefix.replace(/[\\%_]/g, (c) => `\\${c}`) + '%');
      where += ` AND e.stream_id LIKE $${params.length}`;
    }
    const rows = await executor.query<EventRow & { boundary: string | number }>(
      `SELECT b.boundary, x.* FROM (SELECT ${BOUNDARY_SQL} AS boundary) b
       LEFT JOIN LATERAL (
         SELECT ${EVENT_COLUMNS.split(', ').map((c) => `e.${c}`).join(', ')} FROM events e
         WHERE e.global_position >= $1 AND e.global_position < b.boundary${where}
         ORDER BY e.global_position LIMIT $2
       ) x ON true`,
      params,
    );
    const boundary = Number(rows[0].boundary);
    const events = rows.filter((r) => r.event_id !== null).map(toRecorded);
    const nextPosition = events.length === limit ? events[events.length - 1].global_position + 1 : Math.max(from, boundary);
    return { events, nextPosition };
  }

  async headPosition(): Promise<number> {
    const [row] = await this.db.query<{ boundary: string | number }>(`SELECT ${BOUNDARY_SQL} AS boundary`);
    return Number(row.boundary);
  }

  subscribeToAll(options: SubscribeOptions = {}): AllSubscription {
    const state = { stopped: false, wake: null as (() => void) | null };
    const iterator = this.follow(options, state);
    return {
      [Symbol.asyncIterator]: () => iterator,
      stop: async () => {
        state.stopped = true;
        state.wake?.();
      },
    };
  }

  /** Catch-up, then live: read pages from `$all`; when caught up, wait for a wake-up or the poll interval. */
  private async *follow(options: SubscribeOptions, state: { stopped: boolean; wake: (() => void) | null }): AsyncGenerator<RecordedEvent> {
    const batchSize = clampLimit(options.batchSize, 10_000, 500);
    let position = options.fromPosition === 'end' ? await this.headPosition() : (options.fromPosition ?? 0);
    while (!state.stopped && !this.closed) {
      const page = await this.readAll({ fromPosition: position, limit: batchSize, filter: options.filter });
      for (const event of page.events) {
        if (state.stopped) return;
        yield event;
      }
      position = page.nextPosition;
      if (page.events.length < batchSize && !state.stopped) {
        await this.waitForEvents(this.pollIntervalMs, (wake) => (state.wake = wake));
      }
    }
  }

  /**
   * Resolves when this process appends, another process notifies, or the timeout passes.
   * `register` receives a function that ends the wait early (used by stop()).
   */
  async waitForEvents(timeoutMs: number, register?: (wake: () => void) => void): Promise<void> {
    this.ensureListening();
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      this.waiters.add(done);
      register?.(done);
    });
  }

  private ensureListening(): void {
    if (this.unlisten || this.db.kind !== 'postgres' || this.closed) return;
    this.unlisten = this.db.listen(NOTIFY_CHANNEL, () => this.wakeWaiters());
    this.unlisten.catch(() => (this.unlisten = null)); // fall back to polling
  }

  private wakeWaiters(): void {
    for (const wake of [...this.waiters]) wake();
  }

  /** Wake local subscribers now; tell other processes, at most once per 5 ms. */
  private announce(): void {
    this.wakeWaiters();
    if (this.db.kind !== 'postgres' || this.notifyTimer || this.closed) return;
    this.notifyTimer = setTimeout(() => {
      this.notifyTimer = null;
      if (!this.closed) this.db.notify(NOTIFY_CHANNEL).catch(() => undefined);
    }, 5);
  }

  async verifyStream(stream: string): Promise<ChainVerdict> {
    const events = await this.readStream(stream);
    const verdict = verifyChain(stream, events);
    if (!verdict.valid) return verdict;
    const [head] = await this.db.query<{ revision: string | number; last_hash: string | null }>(
      'SELECT revision, last_hash FROM streams WHERE stream_id = $1',
      [stream],
    );
    const headRevision = head ? Number(head.revision) : -1;
    const lastRevision = events.length - 1;
    if (headRevision !== lastRevision || (head?.last_hash ?? null) !== verdict.last_hash) {
      // Trailing events removed (or the head rewritten): the chain alone cannot see that.
      return {
        valid: false,
        stream_id: stream,
        events: events.length,
        broken_at_revision: Math.min(headRevision, lastRevision) + 1,
        event_id: events[events.length - 1]?.event_id ?? '',
        reason: 'revision_gap',
        expected: head?.last_hash ?? null,
        actual: verdict.last_hash,
      };
    }
    return verdict;
  }

  async ping(): Promise<void> {
    await this.db.query('SELECT 1');
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.notifyTimer) clearTimeout(this.notifyTimer);
    this.wakeWaiters();
    const unlisten = await this.unlisten?.catch(() => null);
    await unlisten?.();
  }
}

function prepareAll(events: NewEvent[]): PreparedEvent[] {
  const prepared = events.map(prepare);
  if (new Set(prepared.map((e) => e.event_id)).size !== prepared.length) throw new InvalidAppend('event ids repeat within one append');
  return prepared;
}

/**
 * The RFC 8785 form of each hashed event (see hash-chain.ts), split around the two values only
 * the database knows: prev_hash and revision. Keys in JCS order: data, event_id, metadata,
 * prev_hash, recorded_at, revision, stream_id, type.
 */
function fragments(stream: string, prepared: PreparedEvent[], recordedAt: string) {
  const streamJson = canonicalJson(stream);
  const mid = midFragment(recordedAt);
  return {
    ids: prepared.map((e) => e.event_id),
    types: prepared.map((e) => e.type),
    data: prepared.map((e) => e.dataJson),
    metadata: prepared.map((e) => e.metadataJson),
    heads: prepared.map((e) => `{"data":${e.dataJson},"event_id":${canonicalJson(e.event_id)},"metadata":${e.metadataJson},"prev_hash":`),
    mids: prepared.map(() => mid),
    tails: prepared.map((e) => tailFragment(streamJson, e.type)),
  };
}

const midFragment = (recordedAt: string) => `,"recorded_at":${canonicalJson(recordedAt)},"revision":`;
const tailFragment = (streamJson: string, type: string) => `,"stream_id":${streamJson},"type":${canonicalJson(type)}}`;

const tooManyEvents = (err: unknown): never => {
  if (sqlState(err) === '54000') throw new InvalidAppend('one transaction may append at most 65,536 events');
  throw err;
};

const wrongVersion = (stream: string, expected: ExpectedRevision, row: AppendRow) => {
  const current = Number(row.stream_revision);
  return new WrongExpectedVersion(stream, expected, current < 0 ? 'no_stream' : current);
};

function clampLimit(limit: number | undefined, max: number, dflt = max): number {
  if (limit === undefined) return dflt;
  if (!Number.isInteger(limit) || limit < 1) throw new InvalidAppend('limit must be a positive integer');
  return Math.min(limit, max);
}

function validateAppend(stream: string, events: NewEvent[], expected: ExpectedRevision): void {
  if (typeof stream !== 'string' || stream.length === 0 || stream.length > MAX_STREAM_ID_LENGTH || stream.startsWith('$')) {
    throw new InvalidAppend(`stream id must be 1..${MAX_STREAM_ID_LENGTH} characters and not start with $`);
  }
  if (!Array.isArray(events) || events.length === 0) throw new InvalidAppend('append needs at least one event');
  if (events.length > MAX_EVENTS_PER_APPEND) throw new InvalidAppend(`at most ${MAX_EVENTS_PER_APPEND} events per append`);
  if (!['any', 'no_stream', 'stream_exists'].includes(expected as string) && !(Number.isInteger(expected) && (expected as number) >= 0)) {
    throw new InvalidAppend('expectedRevision must be any, no_stream, stream_exists or a revision >= 0');
  }
}

function prepare(e: NewEvent): PreparedEvent {
  const eventId = e.event_id ?? randomUUID();
  if (typeof eventId !== 'string' || !UUID_RE.test(eventId)) throw new InvalidAppend(`event_id must be a lowercase uuid`);
  if (typeof e.type !== 'string' || e.type.length === 0 || e.type.length > MAX_TYPE_LENGTH) {
    throw new InvalidAppend(`event type must be 1..${MAX_TYPE_LENGTH} characters`);
  }
  const metadata = e.metadata ?? {};
  if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)) throw new InvalidAppend('metadata must be an object');
  try {
    // The stored JSON text is the canonical text that was hashed.
    const dataJson = canonicalJson(e.data);
    const metadataJson = canonicalJson(metadata);
    return { event_id: eventId, type: e.type, data: JSON.parse(dataJson), metadata: JSON.parse(metadataJson), dataJson, metadataJson };
  } catch (err) {
    if (err instanceof CanonicalizationError) throw new InvalidAppend(`event data is not canonical JSON: ${err.message}`);
    throw err;
  }
}
