import { TIMELINE_ANCHOR_SCHEMA_VERSION, verifyReceipt } from './receipt';
import type { SigningKeyStatus } from './keys';

/**
 * The end of a transaction's timeline. Once a transaction reaches a terminal status (`rejected`,
 * `declined`, `expired`, `receipt_issued`), the service appends one `timeline.anchored` event right
 * after the terminal event; its data's `anchor` is a signed payment_timeline_anchor.v1 record
 * naming that event's hash, revision, status and type. Nothing follows it. So a terminal timeline
 * without its anchor, or whose anchor names another event, has lost events off its end.
 */
export const TIMELINE_ANCHORED = 'timeline.anchored';
export const TERMINAL_STATUSES: readonly string[] = ['rejected', 'declined', 'expired', 'receipt_issued'];

/** The events this check reads (stored events, in revision order, their chain already verified). */
interface AnchoredEvent {
  event_id: string;
  stream_id: string;
  revision: number;
  type: string;
  data: unknown;
  hash: string;
}

export type AnchorFailure = 'anchor_missing' | 'anchor_mismatch' | 'anchor_misplaced' | 'anchor_signature_invalid' | 'anchor_keys_required' | 'truncated' | 'status_mismatch';

/** What the timeline's end says. `state` `open`: not terminal yet, nothing to anchor. */
export interface TimelineAnchorSummary {
  state: 'anchored' | 'open' | 'missing' | 'mismatch' | 'misplaced' | 'signature_invalid' | 'unverified' | 'truncated';
  terminal_status: string | null;
  /** The anchor event's revision. */
  revision: number | null;
  key_id: string | null;
  key_status?: SigningKeyStatus;
  /** Why it fails, in words. */
  detail?: string;
}

export type AnchorCheck =
  | { ok: true; anchor: TimelineAnchorSummary; warnings: string[] }
  | { ok: false; reason: AnchorFailure; anchor: TimelineAnchorSummary; broken_at_revision?: number; event_id?: string; expected?: string | number | null; actual?: string | number | null };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const statusOf = (e: AnchoredEvent): string | null => (isObject(e.data) && typeof e.data.status === 'string' ? e.data.status : null);
const isTerminalEvent = (e: AnchoredEvent) => e.type !== TIMELINE_ANCHORED && TERMINAL_STATUSES.includes(statusOf(e) ?? '');

/**
 * Checks the end of a verified chain: a terminal event must be followed by exactly one anchor, the
 * last event, whose record names that event (hash, revision, count, status, type, stream,
 * transaction) and whose signature verifies against `keys` (the published keys document). An
 * `expectedStatus` (the transaction's status as the service reports it) catches a timeline whose
 * terminal event was cut off along with its anchor: what the events alone cannot show.
 */
export function checkTimelineEnd(ordered: readonly AnchoredEvent[], options: { keys?: unknown; expectedStatus?: string }): AnchorCheck {
  const t = ordered.findIndex(isTerminalEvent);
  const summary = (state: TimelineAnchorSummary['state'], extra: Partial<TimelineAnchorSummary> = {}): TimelineAnchorSummary => ({ state, terminal_status: null, revision: null, key_id: null, ...extra });
  const last = ordered[ordered.length - 1];
  if (t < 0) {
    const stray = ordered.find((e) => e.type === TIMELINE_ANCHORED);
    if (stray) return { ok: false, reason: 'anchor_misplaced', anchor: summary('misplaced', { detail: 'an anchor ends a timeline that never reached a terminal state' }), broken_at_revision: stray.revision, event_id: stray.event_id };
    const expected = options.expectedStatus;
    if (expected !== undefined && TERMINAL_STATUSES.includes(expected)) {
      const detail = `the transaction is ${expected}, but its timeline has no terminal event: events were cut off its end`;
      return { ok: false, reason: 'truncated', anchor: summary('truncated', { terminal_status: expected, detail }), broken_at_revision: last.revision + 1, expected, actual: statusOf(last) };
    }
    if (expected !== undefined && expected !== statusOf(last)) {
      return { ok: false, reason: 'status_mismatch', anchor: summary('open', { detail: `the timeline ends ${statusOf(last)}, the transaction is ${expected}` }), expected, actual: statusOf(last) };
    }
    return { ok: true, anchor: summary('open'), warnings: [] };
  }
  const terminal = ordered[t];
  const status = statusOf(terminal);
  if (options.expectedStatus !== undefined && options.expectedStatus !== status) {
    return { ok: false, reason: 'status_mismatch', anchor: summary('open', { terminal_status: status, detail: `the timeline ends ${status}, the transaction is ${options.expectedStatus}` }), expected: options.expectedStatus, actual: status };
  }
  if (t === ordered.length - 1) {
    const detail = `the timeline ends ${status} at revision ${terminal.revision} without the anchor that must follow its terminal event`;
    return { ok: false, reason: 'anchor_missing', anchor: summary('missing', { terminal_status: status, detail }), broken_at_revision: terminal.revision + 1, event_id: terminal.event_id };
  }
  const next = ordered[t + 1];
  if (next.type !== TIMELINE_ANCHORED || t + 1 !== ordered.length - 1) {
    const at = next.type !== TIMELINE_ANCHORED ? next : ordered[t + 2];
    const detail = next.type !== TIMELINE_ANCHORED ? `${next.type} follows the terminal event; only its anchor may` : 'events follow the anchor';
    return { ok: false, reason: 'anchor_misplaced', anchor: summary('misplaced', { terminal_status: status, detail }), broken_at_revision: at.revision, event_id: at.event_id };
  }
  const record = isObject(next.data) ? next.data.anchor : undefined;
  const payload = isObject(record) && isObject(record.payload) ? record.payload : null;
  const signature = isObject(record) && isObject(record.signature) ? record.signature : null;
  const found = { terminal_status: status, revision: next.revision, key_id: typeof signature?.key_id === 'string' ? signature.key_id : null };
  const mismatch = (detail: string, expected: string | number | null, actual: unknown): AnchorCheck => ({
    ok: false,
    reason: 'anchor_mismatch',
    anchor: summary('mismatch', { ...found, detail }),
    broken_at_revision: next.revision,
    event_id: next.event_id,
    expected,
    actual: typeof actual === 'string' || typeof actual === 'number' ? actual : actual === undefined ? null : JSON.stringify(actual),
  });
  if (!payload || !isObject(record) || record.schema_version !== TIMELINE_ANCHOR_SCHEMA_VERSION) return mismatch(`the anchor event carries no ${TIMELINE_ANCHOR_SCHEMA_VERSION} record`, TIMELINE_ANCHOR_SCHEMA_VERSION, isObject(record) ? record.schema_version : null);
  const data = isObject(terminal.data) ? terminal.data : {};
  const expected: Record<string, string | number | null> = {
    transaction_id: typeof data.transaction_id === 'string' ? data.transaction_id : null,
    stream_id: terminal.stream_id,
    terminal_status: status,
    terminal_event_type: terminal.type,
    last_event_revision: terminal.revision,
    event_count: terminal.revision + 1,
    last_event_hash: terminal.hash,
  };
  for (const [field, value] of Object.entries(expected)) {
    if (payload[field] !== value) return mismatch(`the anchor's ${field} is ${JSON.stringify(payload[field])}, the timeline's ${JSON.stringify(value)}`, value, payload[field]);
  }
  if (options.keys === undefined) {
    const detail = 'checking the anchor of a terminal timeline needs the signing keys (the keys document)';
    return { ok: false, reason: 'anchor_keys_required', anchor: summary('unverified', { ...found, detail }), broken_at_revision: next.revision, event_id: next.event_id };
  }
  const verdict = verifyReceipt(record, options.keys, { expectedSchema: TIMELINE_ANCHOR_SCHEMA_VERSION });
  if (!verdict.valid) {
    return { ok: false, reason: 'anchor_signature_invalid', anchor: summary('signature_invalid', { ...found, key_status: verdict.key_status, detail: `the anchor does not verify: ${verdict.reason}` }), broken_at_revision: next.revision, event_id: next.event_id, actual: verdict.reason ?? null };
  }
  return { ok: true, anchor: summary('anchored', { ...found, key_status: verdict.key_status }), warnings: verdict.warnings };
}
