import { ANCHOR_SCHEMA, signRecord, verifyRecord } from '../receipts/signed-record';
import { specAuthority, specSignatureCheck } from '../transactions/transaction-spec-fixtures';
import { anchorTimeline, checkTimelineAnchor, isTerminalEvent, StoredTimelineEvent, TIMELINE_ANCHORED } from './timeline-anchor';

const txn = 'txn_' + 'a'.repeat(32);
const stream = `transaction-${txn}`;
const ids = { transaction_id: txn, authorization_id: 'auth_' + 'b'.repeat(32), organization_id: 'org_a' };
const event = (revision: number, type: string, status: string): StoredTimelineEvent => ({ stream_id: stream, revision, type, hash: `sha256:${String(revision).repeat(64).slice(0, 64)}`, data: { ...ids, status } });
const now = new Date('2026-11-25T10:00:00.000Z');
const sign = (payload: Record<string, unknown>) => signRecord(ANCHOR_SCHEMA, payload, specAuthority.sign);
const verify = (record: unknown) => verifyRecord(record, specSignatureCheck);
/** The anchor event as the store would record it after `last`. */
const anchorAfter = (last: StoredTimelineEvent): StoredTimelineEvent => {
  const [e] = anchorTimeline(last, { issuer: 'sigil.test', now, sign });
  return { stream_id: stream, revision: last.revision + 1, type: e.type, hash: 'sha256:' + 'f'.repeat(64), data: e.data };
};
const blocked = [event(0, 'authorization.requested', 'evaluating'), event(1, 'authorization.rejected', 'rejected')];

describe('timeline anchors (pure)', () => {
  it('anchors a terminal event only: the signed payment_timeline_anchor.v1 names its hash, revision, status and type', () => {
    expect(anchorTimeline(event(1, 'authorization.approved', 'authorized'), { issuer: 'sigil.test', now, sign })).toEqual([]);
    const [anchor] = anchorTimeline(blocked[1], { issuer: 'sigil.test', now, sign });
    expect(anchor).toMatchObject({ type: TIMELINE_ANCHORED, data: { ...ids, status: 'rejected' }, metadata: { actor: 'system:timeline-anchor', correlation_id: txn } });
    const record = (anchor.data as { anchor: { schema_version: string; payload: Record<string, unknown> } }).anchor;
    expect(record.schema_version).toBe('payment_timeline_anchor.v1');
    expect(record.payload).toEqual({
      ...ids,
      stream_id: stream,
      terminal_status: 'rejected',
      terminal_event_type: 'authorization.rejected',
      last_event_revision: 1,
      event_count: 2,
      last_event_hash: blocked[1].hash,
      issuer: 'sigil.test',
      anchored_at: now.toISOString(),
    });
    expect(verify(record)).toMatchObject({ valid: true, key_id: 'key-1' });
    // The anchor itself is never anchored again.
    expect(anchorTimeline(anchorAfter(blocked[1]), { issuer: 'sigil.test', now, sign })).toEqual([]);
  });

  it('every terminal status is terminal; the others and the anchor are not', () => {
    for (const s of ['rejected', 'declined', 'expired', 'receipt_issued']) expect(isTerminalEvent(event(3, 'x', s))).toBe(true);
    for (const s of ['evaluating', 'needs_review', 'authorized', 'executed']) expect(isTerminalEvent(event(3, 'x', s))).toBe(false);
    expect(isTerminalEvent({ ...event(3, TIMELINE_ANCHORED, 'rejected') })).toBe(false);
  });

  it('an anchored timeline is valid; an open one is valid and says so', () => {
    expect(checkTimelineAnchor([...blocked, anchorAfter(blocked[1])], verify)).toMatchObject({ valid: true, state: 'anchored', terminal_status: 'rejected', revision: 2, key_id: 'key-1', detail: null });
    expect(checkTimelineAnchor([event(0, 'authorization.requested', 'evaluating'), event(1, 'authorization.approved', 'authorized')], verify)).toMatchObject({ valid: true, state: 'open', terminal_status: null });
  });

  it('a terminal timeline without its anchor is invalid (missing), not a warning', () => {
    expect(checkTimelineAnchor(blocked, verify)).toMatchObject({ valid: false, state: 'missing', terminal_status: 'rejected', detail: expect.stringContaining('without the anchor') });
  });

  it('an anchor that names another hash, revision, status or stream is a mismatch', () => {
    const good = anchorAfter(blocked[1]);
    const edit = (field: string, value: unknown): StoredTimelineEvent => {
      const d = structuredClone(good.data) as { anchor: { payload: Record<string, unknown> } };
      d.anchor.payload[field] = value;
      return { ...good, data: d };
    };
    for (const [field, value] of [['last_event_hash', 'sha256:' + '0'.repeat(64)], ['last_event_revision', 0], ['event_count', 1], ['terminal_status', 'expired'], ['stream_id', 'transaction-txn_other'], ['transaction_id', 'txn_other']] as const) {
      expect({ field, ...checkTimelineAnchor([...blocked, edit(field, value)], verify) }).toMatchObject({ field, valid: false, state: 'mismatch', detail: expect.stringContaining(field) });
    }
    // A record rewritten and re-hashed, but signed by nobody the keys know: its signature fails.
    const forged = structuredClone(good.data) as { anchor: { signature: { value: string } } };
    forged.anchor.signature.value = forged.anchor.signature.value.replace(/^./, (c) => (c === 'A' ? 'B' : 'A'));
    expect(checkTimelineAnchor([...blocked, { ...good, data: forged }], verify)).toMatchObject({ valid: false, state: 'signature_invalid' });
  });

  it('an anchor out of place (before the end, twice, on an open timeline, or something after it) is invalid', () => {
    const anchor = anchorAfter(blocked[1]);
    expect(checkTimelineAnchor([...blocked, anchor, event(3, 'execution.initiated', 'authorized')], verify)).toMatchObject({ valid: false, state: 'misplaced' });
    expect(checkTimelineAnchor([...blocked, event(2, 'execution.initiated', 'authorized')], verify)).toMatchObject({ valid: false, state: 'misplaced' });
    expect(checkTimelineAnchor([event(0, 'authorization.requested', 'evaluating'), { ...anchor, revision: 1 }], verify)).toMatchObject({ valid: false, state: 'misplaced' });
  });

  it("with the read model's view: a stream shorter than recorded, or a terminal transaction whose terminal event is gone, is truncated", () => {
    const anchored = [...blocked, anchorAfter(blocked[1])];
    expect(checkTimelineAnchor(anchored, verify, { status: 'rejected', revision: 2, anchored_revision: 2 })).toMatchObject({ valid: true, state: 'anchored' });
    // The anchor deleted: the read model recorded revision 2.
    expect(checkTimelineAnchor(blocked, verify, { status: 'rejected', revision: 2, anchored_revision: 2 })).toMatchObject({ valid: false, state: 'truncated', terminal_status: 'rejected' });
    // Anchor and terminal event deleted: the stream alone looks open.
    expect(checkTimelineAnchor(blocked.slice(0, 1), verify)).toMatchObject({ valid: true, state: 'open' });
    expect(checkTimelineAnchor(blocked.slice(0, 1), verify, { status: 'rejected', revision: 2, anchored_revision: 2 })).toMatchObject({ valid: false, state: 'truncated' });
    // Even were the read model's revision rolled back too, its status still says the transaction ended.
    expect(checkTimelineAnchor(blocked.slice(0, 1), verify, { status: 'rejected', revision: 0, anchored_revision: null })).toMatchObject({ valid: false, state: 'truncated' });
    // An open transaction whose last events were cut off.
    expect(checkTimelineAnchor(blocked.slice(0, 1), verify, { status: 'authorized', revision: 3, anchored_revision: null })).toMatchObject({ valid: false, state: 'truncated' });
  });
});
