import { canonicalJson } from '../encoding/canonical-json';
import { sha256Hex } from '../encoding/hashing';
import { AnchorFailure, checkTimelineEnd, TimelineAnchorSummary } from './timeline-anchor';

/**
 * A transaction's timeline is one event stream, hash-chained: each event's `hash` is the SHA-256
 * of the RFC 8785 form of { event_id, stream_id, revision, type, data, metadata, recorded_at,
 * prev_hash }, and `prev_hash` is the previous event's hash (null at revision 0). This is the
 * server's eventHash (libs/event-store hash-chain.ts) and what its sigil_append SQL computes.
 */
export interface TimelineEvent {
  event_id: string;
  stream_id: string;
  revision: number;
  type: string;
  data: unknown;
  metadata: Record<string, unknown>;
  /** ISO-8601 with milliseconds, exactly as recorded. */
  recorded_at: string;
  /** `sha256:<hex>`. */
  hash: string;
  prev_hash: string | null;
  [served: string]: unknown;
}

/**
 * GET /api/cdp/transactions/{id}/events: readable entries, each carrying the stored event that its
 * hash covers under `stored`.
 */
export interface TimelineEntry {
  event_id: string;
  event_type: string;
  sequence: number;
  timestamp: string;
  actor: { type: string; id: string };
  /** The status the event recorded (after it). */
  status: string;
  /** The statuses the event moved the transaction into, in order: `["initiated", "evaluating"]` for authorization.requested, `[]` when it changed none. */
  entered?: string[];
  metadata: Record<string, unknown>;
  hash: string;
  prev_hash: string | null;
  stored: TimelineEvent;
}

export type TimelineFailure =
  | 'malformed'
  | 'empty'
  | 'stream_mismatch'
  | 'revision_gap'
  | 'prev_hash_mismatch'
  | 'hash_mismatch'
  | 'view_mismatch'
  | 'last_hash_mismatch'
  | 'hash_not_in_chain'
  | AnchorFailure;

export interface TimelineVerification {
  valid: boolean;
  reason?: TimelineFailure;
  events: number;
  stream_id: string | null;
  /** The hash of the last event, when the chain holds. */
  last_hash: string | null;
  /** The first revision whose link is broken. */
  broken_at_revision?: number;
  event_id?: string;
  /** For view_mismatch: the readable field that disagrees with the stored event. */
  field?: string;
  expected?: string | number | null;
  actual?: string | number | null;
  /** The timeline's end, once the chain holds: anchored (terminal, its signed anchor checked), open (not terminal yet), or why not. */
  anchor?: TimelineAnchorSummary;
  /** E.g. an anchor signed by a key revoked after it signed. */
  warnings?: string[];
}

export interface VerifyTimelineOptions {
  /** The stream the events must belong to, e.g. `transaction-txn_…`. */
  streamId?: string;
  /** Shorthand for streamId `transaction-<id>`; taken from the served document when it names one. */
  transactionId?: string;
  /** The hash the last event must have: the chain alone cannot show that events were cut off its end. */
  lastHash?: string;
  /**
   * A hash that must be one of the chain's events, e.g. a signed receipt's
   * `timeline_last_event_hash`, which binds the receipt to this timeline.
   */
  includesHash?: string;
  /**
   * The signing keys document (GET /.well-known/signing-keys.json): the anchor that ends a terminal
   * timeline is checked against it. A terminal timeline does not verify without it.
   */
  keys?: unknown;
  /**
   * The transaction's status as the service reports it (GET /api/cdp/transactions/{id}): a terminal
   * status with a timeline that has no terminal event means events were cut off its end, anchor
   * included, which the events alone cannot show.
   */
  expectedStatus?: string;
}

/** The hash the server records for an event. Throws CanonicalizationError on non-JSON data. */
export function timelineEventHash(e: Pick<TimelineEvent, 'event_id' | 'stream_id' | 'revision' | 'type' | 'data' | 'metadata' | 'recorded_at' | 'prev_hash'>): string {
  const { event_id, stream_id, revision, type, data, metadata, recorded_at, prev_hash } = e;
  return `sha256:${sha256Hex(canonicalJson({ event_id, stream_id, revision, type, data, metadata, recorded_at, prev_hash }))}`;
}

function wellFormed(e: unknown): e is TimelineEvent {
  if (typeof e !== 'object' || e === null) return false;
  const v = e as Record<string, unknown>;
  return (
    typeof v.event_id === 'string' &&
    typeof v.stream_id === 'string' &&
    typeof v.revision === 'number' &&
    Number.isSafeInteger(v.revision) &&
    typeof v.type === 'string' &&
    typeof v.metadata === 'object' &&
    v.metadata !== null &&
    typeof v.recorded_at === 'string' &&
    typeof v.hash === 'string' &&
    (v.prev_hash === null || typeof v.prev_hash === 'string')
  );
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The stored event of a served entry, or the event itself. */
const storedOf = (e: unknown): unknown => (isObject(e) && isObject(e.stored) ? e.stored : e);

/**
 * The first readable field of a served entry that disagrees with its stored event, so what is
 * shown is what the chain covers: event_type, sequence, timestamp, status, metadata (the data
 * without transaction_id, organization_id and status), actor, hash and prev_hash.
 */
function viewMismatch(entry: Record<string, unknown>, e: TimelineEvent): { field: string; expected: string | number | null; actual: string | number | null } | null {
  const show = (v: unknown): string | number | null => (typeof v === 'string' || typeof v === 'number' || v === null ? v : safeJson(v));
  const data = isObject(e.data) ? e.data : {};
  const { transaction_id: _t, organization_id: _o, status, ...details } = data;
  const actor = typeof e.metadata.actor === 'string' ? e.metadata.actor : 'unknown';
  const colon = actor.indexOf(':');
  const expected: Record<string, unknown> = {
    event_id: e.event_id,
    event_type: e.type,
    sequence: e.revision + 1,
    timestamp: e.recorded_at,
    status,
    metadata: details,
    actor: colon < 0 ? { type: 'unknown', id: actor } : { type: actor.slice(0, colon), id: actor.slice(colon + 1) },
    hash: e.hash,
    prev_hash: e.prev_hash,
  };
  for (const [field, value] of Object.entries(expected)) {
    if (!(field in entry)) continue;
    if (safeJson(entry[field]) !== safeJson(value)) return { field, expected: show(value), actual: show(entry[field]) };
  }
  return null;
}

function safeJson(v: unknown): string {
  try {
    return canonicalJson(v);
  } catch {
    return String(v);
  }
}

/**
 * Verifies a transaction's events offline: every hash recomputed, every prev_hash linked,
 * revisions 0..n-1 without gaps, and its end: a terminal timeline must end with its signed anchor
 * (checked against `options.keys`), so one cut short does not verify (checkTimelineEnd). Accepts the served timeline (`{ transaction_id, events }` whose
 * entries carry their `stored` event; the readable fields must agree with it), an array of entries,
 * or an array of stored events, in any order (they are put in revision order). Reports the first
 * broken revision. Never throws.
 */
export function verifyTimeline(events: unknown, options: VerifyTimelineOptions = {}): TimelineVerification {
  const doc = isObject(events) ? events : null;
  const list = Array.isArray(events) ? events : doc?.events;
  if (!Array.isArray(list)) return { valid: false, reason: 'malformed', events: 0, stream_id: null, last_hash: null };
  const n = list.length;
  const transactionId = options.transactionId ?? (typeof doc?.transaction_id === 'string' ? doc.transaction_id : undefined);
  const wanted = options.streamId ?? (transactionId === undefined ? undefined : `transaction-${transactionId}`);
  const bad = list.findIndex((e) => !wellFormed(storedOf(e)));
  if (bad >= 0) return { valid: false, reason: 'malformed', events: n, stream_id: null, last_hash: null, broken_at_revision: bad };
  if (n === 0) return { valid: false, reason: 'empty', events: 0, stream_id: wanted ?? null, last_hash: null };
  const entries = list.map((raw) => ({ view: storedOf(raw) === raw ? null : (raw as Record<string, unknown>), event: storedOf(raw) as TimelineEvent }));
  entries.sort((a, b) => a.event.revision - b.event.revision);
  const ordered = entries.map((x) => x.event);
  const streamId = wanted ?? ordered[0].stream_id;
  let prev: string | null = null;
  for (let i = 0; i < ordered.length; i++) {
    const e = ordered[i];
    const broken = (reason: TimelineFailure, expected: string | number | null, actual: string | number | null): TimelineVerification => ({
      valid: false,
      reason,
      events: n,
      stream_id: streamId,
      last_hash: null,
      broken_at_revision: e.revision,
      event_id: e.event_id,
      expected,
      actual,
    });
    if (e.stream_id !== streamId) return broken('stream_mismatch', streamId, e.stream_id);
    if (e.revision !== i) return broken('revision_gap', i, e.revision);
    if (e.prev_hash !== prev) return broken('prev_hash_mismatch', prev, e.prev_hash);
    let computed: string;
    try {
      computed = timelineEventHash(e);
    } catch {
      computed = 'uncomputable';
    }
    if (computed !== e.hash) return broken('hash_mismatch', computed, e.hash);
    const view = entries[i].view && viewMismatch(entries[i].view!, e);
    if (view) return { ...broken('view_mismatch', view.expected, view.actual), field: view.field };
    prev = e.hash;
  }
  if (options.lastHash !== undefined && options.lastHash !== prev) {
    const last = ordered[ordered.length - 1];
    return { valid: false, reason: 'last_hash_mismatch', events: n, stream_id: streamId, last_hash: prev, broken_at_revision: last.revision + 1, event_id: last.event_id, expected: options.lastHash, actual: prev };
  }
  if (options.includesHash !== undefined && !ordered.some((e) => e.hash === options.includesHash)) {
    return { valid: false, reason: 'hash_not_in_chain', events: n, stream_id: streamId, last_hash: prev, expected: options.includesHash, actual: null };
  }
  const end = checkTimelineEnd(ordered, { keys: options.keys, expectedStatus: options.expectedStatus });
  if (!end.ok) {
    const { ok: _ok, ...failure } = end;
    return { valid: false, events: n, stream_id: streamId, last_hash: prev, ...failure };
  }
  return { valid: true, events: n, stream_id: streamId, last_hash: prev, anchor: end.anchor, ...(end.warnings.length ? { warnings: end.warnings } : {}) };
}
