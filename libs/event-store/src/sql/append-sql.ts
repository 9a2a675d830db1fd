import { randomUUID } from 'node:crypto';
import { canonicalJson, CanonicalizationError } from '@app/crypto';
import { EventMetadata, ExpectedRevision, InvalidAppend, NewEvent, RecordedEvent, WrongExpectedVersion } from '../event-store.port';
import { constraintViolation } from './inline-projections';
import { sqlState } from './sql-database';

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
export const POSITION_SHIFT = 16;
export const MAX_EVENTS_PER_APPEND = 10_000;
export const MAX_STREAM_ID_LENGTH = 256;
export const MAX_TYPE_LENGTH = 128;
export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const NOTIFY_CHANNEL = 'sigil_events';

export const EVENT_COLUMNS = 'global_position, event_id, stream_id, revision, type, data, metadata, recorded_at, hash, prev_hash, hashed_type';

export const APPEND_SQL = `SELECT status, stream_revision, first_position, hashes, previous_hash
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

export const APPEND_PARAMS = 10;
/** `appended` of a single append: its one row, numbered 1 as in appendManyIn. */
export const APPENDED_ONE = `SELECT 1 AS ord, x.* FROM (${APPEND_SQL}) x`;

/**
 * The append statement with the registered read models' CTEs, a follow-up (params after the
 * append's) and the row guards, which the final select reads so that each runs (one raises to
 * refuse the statement).
 */
export function appendStatement(base: string, ctes: string[], followUps: string[], firstFollowUpParam: number, orderBy: string, guards: string[] = []): string {
  const parts = [
    `appended AS MATERIALIZED (${base})`,
    ...ctes.map((sql, i) => `read_model_${i} AS (${sql})`),
    ...followUps.map((f, i) => `follow_up_${i} AS (${f.replace(/:(\d+)\b/g, (_, n: string) => `$${firstFollowUpParam - 1 + Number(n)}`)})`),
    ...guards.map((sql, i) => `guard_${i} AS MATERIALIZED (${sql})`),
  ];
  const guarded = guards.length > 0 ? ` WHERE ${guards.map((_, i) => `(SELECT ok FROM guard_${i})`).join(' AND ')}` : '';
  return `WITH ${parts.join(', ')} SELECT * FROM appended${guarded} ${orderBy}`;
}

/**
 * `sigil_append_many`: each append's events are the slice [lo:hi] of the flattened arrays. Text
 * arrays travel as JSON arrays (JSON.stringify is native; pg's array literals escape in JS).
 */
const jsonTexts = (n: number) => `ARRAY(SELECT json_array_elements_text($${n}::json))`;
export const APPEND_MANY_SQL = `SELECT a.ord, a.status, a.stream_revision, a.first_position, a.hashes, a.previous_hash, $9::timestamptz AS recorded_at
  FROM sigil_append_many(${jsonTexts(1)}, ${jsonTexts(2)}, $3::int[], $4::int[], $5::uuid[], ${jsonTexts(6)}, ${jsonTexts(7)}, ${jsonTexts(8)},
                         $9::timestamptz, $10::text, ${jsonTexts(11)}) a`;
export const APPEND_MANY_PARAMS = 11;

/** `appendManyIn`'s read-model writes: one or more statements, sharing the parameters `:1`, `:2`, … */
export interface ManyAppendFollowUp extends Omit<AppendFollowUp, 'sql'> {
  sql: string | string[];
}

export interface AppendRow {
  status: 'appended' | 'replay' | 'wrong_expected_version';
  stream_revision: string | number;
  first_position: string | number | null;
  hashes: string[] | null;
  previous_hash: string | null;
}

export const BOUNDARY_SQL = `pg_snapshot_xmin(pg_current_snapshot())::text::bigint << ${POSITION_SHIFT}`;

export interface EventRow {
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
  hashed_type?: string | null;
}

export function toRecorded(row: EventRow): RecordedEvent {
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
    ...(row.hashed_type ? { hashed_type: row.hashed_type } : {}),
  };
}

export interface PreparedEvent {
  event_id: string;
  type: string;
  data: unknown;
  metadata: EventMetadata;
  dataJson: string;
  metadataJson: string;
}


export function prepareAll(events: NewEvent[]): PreparedEvent[] {
  const prepared = events.map(prepare);
  if (new Set(prepared.map((e) => e.event_id)).size !== prepared.length) throw new InvalidAppend('event ids repeat within one append');
  return prepared;
}

/**
 * The RFC 8785 form of each hashed event (see hash-chain.ts), split around the two values only
 * the database knows: prev_hash and revision. Keys in JCS order: data, event_id, metadata,
 * prev_hash, recorded_at, revision, stream_id, type.
 */
export function fragments(stream: string, prepared: PreparedEvent[], recordedAt: string) {
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

export const midFragment = (recordedAt: string) => `,"recorded_at":${canonicalJson(recordedAt)},"revision":`;
export const tailFragment = (streamJson: string, type: string) => `,"stream_id":${streamJson},"type":${canonicalJson(type)}}`;

export const appendFailed = (err: unknown): never => {
  if (sqlState(err) === '54000') throw new InvalidAppend('one transaction may append at most 65,536 events');
  return constraintViolation(err);
};

export const wrongVersion = (stream: string, expected: ExpectedRevision, row: AppendRow) => {
  const current = Number(row.stream_revision);
  return new WrongExpectedVersion(stream, expected, current < 0 ? 'no_stream' : current);
};

export function clampLimit(limit: number | undefined, max: number, dflt = max): number {
  if (limit === undefined) return dflt;
  if (!Number.isInteger(limit) || limit < 1) throw new InvalidAppend('limit must be a positive integer');
  return Math.min(limit, max);
}

export function validateAppend(stream: string, events: NewEvent[], expected: ExpectedRevision): void {
  if (typeof stream !== 'string' || stream.length === 0 || stream.length > MAX_STREAM_ID_LENGTH || stream.startsWith('$')) {
    throw new InvalidAppend(`stream id must be 1..${MAX_STREAM_ID_LENGTH} characters and not start with $`);
  }
  if (!Array.isArray(events) || events.length === 0) throw new InvalidAppend('append needs at least one event');
  if (events.length > MAX_EVENTS_PER_APPEND) throw new InvalidAppend(`at most ${MAX_EVENTS_PER_APPEND} events per append`);
  if (!['any', 'no_stream', 'stream_exists'].includes(expected as string) && !(Number.isInteger(expected) && (expected as number) >= 0)) {
    throw new InvalidAppend('expectedRevision must be any, no_stream, stream_exists or a revision >= 0');
  }
}

export function prepare(e: NewEvent): PreparedEvent {
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
