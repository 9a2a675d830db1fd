import { canonicalJson } from '../encoding/canonical-json';
import { sha256Hex } from '../encoding/hashing';

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

export type TimelineFailure =
  | 'malformed'
  | 'empty'
  | 'stream_mismatch'
  | 'revision_gap'
  | 'prev_hash_mismatch'
  | 'hash_mismatch'
  | 'last_hash_mismatch';

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
  expected?: string | number | null;
  actual?: string | number | null;
}

export interface VerifyTimelineOptions {
  /** The stream the events must belong to, e.g. `transaction-txn_…`. */
  streamId?: string;
  /**
   * The hash the last event must have, e.g. from a signed receipt: the chain alone cannot show
   * that events were cut off its end.
   */
  lastHash?: string;
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

/**
 * Verifies a transaction's events offline: every hash recomputed, every prev_hash linked,
 * revisions 0..n-1 without gaps. Accepts an array of events or `{ events: [...] }`, in any order
 * (they are put in revision order). Reports the first broken revision. Never throws.
 */
export function verifyTimeline(events: unknown, options: VerifyTimelineOptions = {}): TimelineVerification {
  const list = Array.isArray(events) ? events : (events as { events?: unknown } | null)?.events;
  if (!Array.isArray(list)) return { valid: false, reason: 'malformed', events: 0, stream_id: null, last_hash: null };
  const n = list.length;
  const bad = list.findIndex((e) => !wellFormed(e));
  if (bad >= 0) return { valid: false, reason: 'malformed', events: n, stream_id: null, last_hash: null, broken_at_revision: bad };
  if (n === 0) return { valid: false, reason: 'empty', events: 0, stream_id: options.streamId ?? null, last_hash: null };
  const ordered = [...(list as TimelineEvent[])].sort((a, b) => a.revision - b.revision);
  const streamId = options.streamId ?? ordered[0].stream_id;
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
    prev = e.hash;
  }
  if (options.lastHash !== undefined && options.lastHash !== prev) {
    const last = ordered[ordered.length - 1];
    return { valid: false, reason: 'last_hash_mismatch', events: n, stream_id: streamId, last_hash: prev, broken_at_revision: last.revision + 1, event_id: last.event_id, expected: options.lastHash, actual: prev };
  }
  return { valid: true, events: n, stream_id: streamId, last_hash: prev };
}
