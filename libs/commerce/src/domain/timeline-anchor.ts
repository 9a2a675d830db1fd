import { isTerminal, TransactionStatus } from './lifecycle';
import type { TransactionEvent } from './transaction.aggregate';

/**
 * A timeline's anchor: once a transaction reaches a terminal state (receipt issued, rejected,
 * declined, expired), one `timeline.anchored` event follows its terminal event and nothing else
 * ever does. Its data carries a signed `payment_timeline_anchor.v1` record naming the hash, the
 * revision and the status of the event it follows, so a timeline with events cut off its end no
 * longer verifies: without the anchor a terminal timeline is incomplete, and an anchor names the
 * one hash the chain must end on.
 *
 * The anchor is its own append, right after the terminal event's: an event's hash covers what the
 * store assigns when it writes it (`recorded_at`), so no record written in the same append can
 * name it. Pure: signing is the caller's closure.
 */
export const TIMELINE_ANCHORED = 'timeline.anchored';

/** The event an anchor is made for: a stored event with its hash. */
export interface StoredTimelineEvent {
  stream_id: string;
  revision: number;
  type: string;
  hash: string;
  data: unknown;
}

export interface SignedAnchor {
  schema_version: string;
  payload: Record<string, unknown>;
  record_hash?: string;
  signature: { alg: string; key_id: string; value: string };
}

const dataOf = (e: StoredTimelineEvent): Record<string, unknown> => (typeof e.data === 'object' && e.data !== null ? (e.data as Record<string, unknown>) : {});
const statusOf = (e: StoredTimelineEvent): TransactionStatus | null => {
  const s = dataOf(e).status;
  return typeof s === 'string' ? (s as TransactionStatus) : null;
};

/** Whether the event ends its transaction: a lifecycle event whose status is terminal. */
export const isTerminalEvent = (e: StoredTimelineEvent): boolean => e.type !== TIMELINE_ANCHORED && statusOf(e) !== null && isTerminal(statusOf(e)!);

/** What a payment_timeline_anchor.v1 record signs: the stream, and the hash, revision and status of its last event. */
export function timelineAnchorPayload(last: StoredTimelineEvent, issuer: string, now: Date) {
  const d = dataOf(last);
  return {
    transaction_id: d.transaction_id as string,
    authorization_id: d.authorization_id as string,
    organization_id: d.organization_id as string,
    stream_id: last.stream_id,
    terminal_status: statusOf(last),
    terminal_event_type: last.type,
    last_event_revision: last.revision,
    event_count: last.revision + 1,
    last_event_hash: last.hash,
    issuer,
    anchored_at: now.toISOString(),
  };
}

/**
 * The anchor to append after `last`, the stream's last event: one `timeline.anchored` event when
 * `last` is terminal, none otherwise (not terminal yet, or anchored already).
 */
export function anchorTimeline(last: StoredTimelineEvent, ctx: { issuer: string; now: Date; sign: (payload: Record<string, unknown>) => SignedAnchor }): TransactionEvent[] {
  if (!isTerminalEvent(last)) return [];
  const d = dataOf(last);
  const anchor = ctx.sign(timelineAnchorPayload(last, ctx.issuer, ctx.now));
  const data = { transaction_id: d.transaction_id, authorization_id: d.authorization_id, organization_id: d.organization_id, status: statusOf(last), anchor };
  return [{ type: TIMELINE_ANCHORED, data: data as Record<string, unknown>, metadata: { actor: 'system:timeline-anchor', correlation_id: String(d.transaction_id) } }];
}

/** `pending`: the server's own view of a `missing` anchor it never wrote (it writes it on the read). */
export type AnchorState = 'anchored' | 'open' | 'missing' | 'pending' | 'mismatch' | 'misplaced' | 'signature_invalid' | 'truncated';

/** What a timeline's end says: anchored (valid), open (not terminal yet, valid), or why it is invalid. */
export interface AnchorVerdict {
  valid: boolean;
  state: AnchorState;
  /** The terminal status the timeline reached (null while open). */
  terminal_status: string | null;
  /** The anchor event's revision, when there is one. */
  revision: number | null;
  key_id: string | null;
  /** Why it is invalid, in words (null when valid). */
  detail: string | null;
  record: SignedAnchor | null;
}

/** What the server knows beside the stream: the read model's status and revision for it. */
export interface ReadModelView {
  status: string;
  revision: number;
  /** The revision of the anchor the read model recorded (null: none written). */
  anchored_revision: number | null;
}

const anchorOf = (e: StoredTimelineEvent): SignedAnchor | null => {
  const a = dataOf(e).anchor;
  return typeof a === 'object' && a !== null ? (a as SignedAnchor) : null;
};

/**
 * Checks a timeline's end (its events in revision order, their chain verified apart): a terminal
 * event must be followed by exactly one anchor, last, whose signed record names that event's
 * hash, revision, status and type, and whose signature `verify` accepts. With the read model's
 * view (the server), a stream shorter than the revision or status the read model recorded is
 * `truncated`: what the stream alone cannot show once its terminal event is gone too.
 */
export function checkTimelineAnchor(
  events: readonly StoredTimelineEvent[],
  verify: (record: unknown) => { valid: true; key_id: string } | { valid: false; reason: string; key_id: string | null },
  readModel?: ReadModelView | null,
): AnchorVerdict {
  const verdict = (state: AnchorState, detail: string | null, extra: Partial<AnchorVerdict> = {}): AnchorVerdict => ({
    valid: state === 'anchored' || state === 'open',
    state,
    terminal_status: null,
    revision: null,
    key_id: null,
    detail,
    record: null,
    ...extra,
  });
  const last = events[events.length - 1];
  const lastRevision = last ? last.revision : -1;
  const t = events.findIndex(isTerminalEvent);
  const anchors = events.flatMap((e, i) => (e.type === TIMELINE_ANCHORED ? [i] : []));
  if (readModel && readModel.revision > lastRevision) {
    return verdict('truncated', `the stream ends at revision ${lastRevision}, but ${readModel.revision} was recorded (status ${readModel.status}): events were removed from its end`, {
      terminal_status: isTerminal(readModel.status as TransactionStatus) ? readModel.status : null,
    });
  }
  if (t < 0) {
    if (anchors.length > 0) return verdict('misplaced', `an anchor at revision ${events[anchors[0]].revision} ends a timeline that never reached a terminal state`);
    if (readModel && isTerminal(readModel.status as TransactionStatus)) return verdict('truncated', `the transaction is ${readModel.status}, but its timeline has no terminal event: events were removed from its end`, { terminal_status: readModel.status });
    return verdict('open', null);
  }
  const terminal = events[t];
  const terminalStatus = statusOf(terminal);
  const base = { terminal_status: terminalStatus };
  if (t === events.length - 1) return verdict('missing', `the timeline ends ${terminalStatus} at revision ${terminal.revision} without the anchor that must follow its terminal event`, base);
  const next = events[t + 1];
  if (next.type !== TIMELINE_ANCHORED) return verdict('misplaced', `${next.type} follows the terminal event at revision ${terminal.revision}; only its anchor may`, base);
  const record = anchorOf(next);
  const at = { ...base, revision: next.revision, record, key_id: record?.signature?.key_id ?? null };
  if (t + 1 !== events.length - 1) return verdict('misplaced', `events follow the anchor at revision ${next.revision}`, at);
  const payload = record?.payload;
  if (!record || typeof payload !== 'object' || payload === null) return verdict('mismatch', 'the anchor event carries no signed anchor record', at);
  const d = dataOf(terminal);
  const expected: Record<string, unknown> = {
    transaction_id: d.transaction_id,
    stream_id: terminal.stream_id,
    terminal_status: terminalStatus,
    terminal_event_type: terminal.type,
    last_event_revision: terminal.revision,
    event_count: terminal.revision + 1,
    last_event_hash: terminal.hash,
  };
  for (const [field, value] of Object.entries(expected)) {
    if (payload[field] !== value) return verdict('mismatch', `the anchor's ${field} is ${JSON.stringify(payload[field])}, but the timeline's is ${JSON.stringify(value)}`, at);
  }
  const signature = verify(record);
  if (!signature.valid) return verdict('signature_invalid', `the anchor's signature does not verify: ${signature.reason}`, at);
  return verdict('anchored', null, { ...at, key_id: signature.key_id });
}
