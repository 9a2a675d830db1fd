import { randomBytes } from 'node:crypto';
import { ANCHOR_SCHEMA, anchorTimeline, signRecord, timelineEntry } from '@app/commerce';
import { openTestStore } from '../../../../test/support/test-store';
import { ServerSigner } from '../../test/server-signer';
import { TimelineEvent, timelineEventHash, verifyTimeline } from './timeline';

/** A transaction's lifecycle, shaped per the commerce event contract. */
function lifecycle(txn: string, auth: string) {
  const base = { transaction_id: txn, authorization_id: auth, organization_id: 'org_test' };
  const meta = (actor: string) => ({ actor, correlation_id: txn });
  return [
    [{ type: 'authorization.requested', data: { ...base, status: 'evaluating', request: { amount_cents: 1250, currency: 'USD', merchant_id: 'm_42', purpose_tag: 'software', expiration_iso: '2030-01-01T00:00:00Z', note: 'résumé 😀 "quoted"' }, policy_id: 'default', policy_hash: 'sha256:' + 'c'.repeat(64), mode: 'test', provider: 'sandbox' }, metadata: meta('api_key:key_0123456789abcdef') }],
    [{ type: 'authorization.approved', data: { ...base, status: 'authorized', decision: 'authorized', policy_id: 'default', policy_hash: 'sha256:' + 'c'.repeat(64) }, metadata: meta('system:policy') }],
    [
      { type: 'execution.initiated', data: { ...base, status: 'authorized', attempt: 1, provider: 'sandbox', provider_idempotency_key: 'k1', amount_cents: 1250 }, metadata: meta('system:settlement') },
      { type: 'execution.succeeded', data: { ...base, status: 'executed', attempt: 1, provider: 'sandbox', provider_reference: 'sbx_1', amount_cents: 1250 }, metadata: meta('system:settlement') },
    ],
    [{ type: 'receipt.issued', data: { ...base, status: 'receipt_issued', receipt_hash: 'sha256:' + 'd'.repeat(64), key_id: 'k' }, metadata: meta('system:receipts') }],
  ];
}

describe('verifyTimeline against the real event store (the embedded SQL adapter)', () => {
  let t: Awaited<ReturnType<typeof openTestStore>>;
  let served: TimelineEvent[];
  let stream: string;
  // The service's signing code: the receipt ends the transaction, and the anchor the server writes follows it.
  const signer = new ServerSigner();
  const keys = signer.keysDocument();

  beforeAll(async () => {
    t = await openTestStore();
    const txn = `txn_${randomBytes(16).toString('hex')}`;
    stream = `transaction-${txn}`;
    for (const batch of lifecycle(txn, `auth_${randomBytes(16).toString('hex')}`)) await t.store.append(stream, batch);
    const [last] = await t.store.readStream(stream, { direction: 'backwards', limit: 1 });
    const sign = (payload: Record<string, unknown>) => signRecord(ANCHOR_SCHEMA, payload, (m) => signer.ring.sign(m));
    await t.store.append(stream, anchorTimeline(last, { issuer: 'sigil.test', now: new Date('2026-11-25T10:00:00.000Z'), sign }), { expectedRevision: last.revision });
    // As an HTTP endpoint would serve them: through JSON.
    served = JSON.parse(JSON.stringify(await t.store.readStream(stream)));
  });
  afterAll(async () => {
    await t?.dispose();
  });

  const copy = (): TimelineEvent[] => JSON.parse(JSON.stringify(served));

  it('recomputes every hash the store recorded and accepts the genuine chain', async () => {
    expect(served).toHaveLength(6);
    expect((await t.store.verifyStream(stream)).valid).toBe(true);
    for (const e of served) expect(timelineEventHash(e)).toBe(e.hash);
    const keyId = signer.ring.active().key_id;
    expect(verifyTimeline(served, { keys })).toEqual({
      valid: true,
      events: 6,
      stream_id: stream,
      last_hash: served[5].hash,
      anchor: { state: 'anchored', terminal_status: 'receipt_issued', revision: 5, key_id: keyId, key_status: 'active' },
    });
    expect(verifyTimeline({ events: served }, { streamId: stream, lastHash: served[5].hash, keys })).toMatchObject({ valid: true });
    expect(verifyTimeline([...served].reverse(), { keys })).toMatchObject({ valid: true }); // any order in, revision order checked
    // A terminal timeline's anchor is signed: without the keys it does not verify.
    expect(verifyTimeline(served)).toMatchObject({ valid: false, reason: 'anchor_keys_required', anchor: { state: 'unverified' } });
  });

  it('reports the first broken revision of a tampered copy', () => {
    const cases: Array<[string, (events: TimelineEvent[]) => void, object]> = [
      ['amount changed', (es) => ((es[3].data as { amount_cents: number }).amount_cents = 99), { reason: 'hash_mismatch', broken_at_revision: 3 }],
      ['actor changed', (es) => (es[1].metadata.actor = 'api_key:key_ffffffffffffffff'), { reason: 'hash_mismatch', broken_at_revision: 1 }],
      ['recorded_at changed', (es) => (es[0].recorded_at = '2020-01-01T00:00:00.000Z'), { reason: 'hash_mismatch', broken_at_revision: 0 }],
      ['type changed', (es) => (es[2].type = 'execution.failed'), { reason: 'hash_mismatch', broken_at_revision: 2 }],
      ['an extra data field', (es) => ((es[1].data as Record<string, unknown>).note = 'x'), { reason: 'hash_mismatch', broken_at_revision: 1 }],
      [
        'tampered, with its own hash recomputed',
        (es) => {
          (es[1].data as { decision: string }).decision = 'blocked';
          es[1].hash = timelineEventHash(es[1]);
        },
        { reason: 'prev_hash_mismatch', broken_at_revision: 2 },
      ],
      ['a middle event removed', (es) => es.splice(2, 1), { reason: 'revision_gap', broken_at_revision: 3 }],
      ['an event duplicated', (es) => es.splice(2, 0, JSON.parse(JSON.stringify(es[2]))), { reason: 'revision_gap', broken_at_revision: 2 }],
      ['the first event removed', (es) => es.shift(), { reason: 'revision_gap', broken_at_revision: 1 }],
      ['an event from another stream', (es) => (es[4].stream_id = 'transaction-txn_other'), { reason: 'stream_mismatch', broken_at_revision: 4 }],
      ['prev_hash rewritten', (es) => (es[3].prev_hash = es[1].hash), { reason: 'prev_hash_mismatch', broken_at_revision: 3 }],
    ];
    for (const [name, tamper, expected] of cases) {
      const events = copy();
      tamper(events);
      expect({ name, ...verifyTimeline(events) }).toMatchObject({ name, valid: false, ...expected });
    }
  });

  it('catches a cut-off end: a terminal event without its anchor, or against the status the service reports, or a known last hash', () => {
    // The anchor cut off: the terminal event ends the timeline, which is invalid, not a warning.
    expect(verifyTimeline(copy().slice(0, 5), { keys })).toMatchObject({ valid: false, reason: 'anchor_missing', broken_at_revision: 5, anchor: { state: 'missing', terminal_status: 'receipt_issued' } });
    // The terminal event cut off too: the events alone look like an open timeline…
    const truncated = copy().slice(0, 4);
    expect(verifyTimeline(truncated, { keys })).toMatchObject({ valid: true, events: 4, anchor: { state: 'open' } });
    // …which the transaction's status, or a known last hash, contradicts.
    expect(verifyTimeline(truncated, { keys, expectedStatus: 'receipt_issued' })).toMatchObject({ valid: false, reason: 'truncated', anchor: { state: 'truncated' } });
    expect(verifyTimeline(truncated, { lastHash: served[4].hash })).toMatchObject({ valid: false, reason: 'last_hash_mismatch', broken_at_revision: 4, expected: served[4].hash, actual: served[3].hash });
    expect(verifyTimeline(copy(), { keys, expectedStatus: 'receipt_issued' })).toMatchObject({ valid: true });
    expect(verifyTimeline(copy(), { keys, expectedStatus: 'declined' })).toMatchObject({ valid: false, reason: 'status_mismatch' });
    // Rewriting the receipt event and every hash after it keeps the chain, but the anchor names the old hash.
    const rewritten = copy();
    (rewritten[4].data as { receipt_hash: string }).receipt_hash = 'sha256:' + 'e'.repeat(64);
    rewritten[4].hash = timelineEventHash(rewritten[4]);
    rewritten[5].prev_hash = rewritten[4].hash;
    rewritten[5].hash = timelineEventHash(rewritten[5]);
    expect(verifyTimeline(rewritten, { keys })).toMatchObject({ valid: false, reason: 'anchor_mismatch', broken_at_revision: 5, expected: rewritten[4].hash, actual: served[4].hash });
    expect(verifyTimeline(rewritten, { lastHash: served[5].hash, keys })).toMatchObject({ valid: false, reason: 'last_hash_mismatch' });
    expect(verifyTimeline(copy(), { streamId: 'transaction-txn_other' })).toMatchObject({ valid: false, reason: 'stream_mismatch', broken_at_revision: 0 });
  });

  it('checks the served timeline: entries carry their stored event, and what is shown must match it', () => {
    const txn = stream.slice('transaction-'.length);
    const doc = () => JSON.parse(JSON.stringify({ transaction_id: txn, chain_valid: true, events: served.map((e) => timelineEntry(e as never)) }));
    expect(verifyTimeline(doc(), { keys })).toMatchObject({ valid: true, events: 6, stream_id: stream, last_hash: served[5].hash, anchor: { state: 'anchored' } });
    expect(verifyTimeline(doc().events, { transactionId: txn, keys })).toMatchObject({ valid: true });
    expect(verifyTimeline(doc(), { transactionId: 'txn_' + '0'.repeat(32) })).toMatchObject({ valid: false, reason: 'stream_mismatch' });
    const views: Array<[string, (d: { events: Array<Record<string, unknown>> }) => void]> = [
      ['status', (d) => (d.events[1].status = 'rejected')],
      ['event_type', (d) => (d.events[2].event_type = 'execution.failed')],
      ['sequence', (d) => (d.events[3].sequence = 9)],
      ['timestamp', (d) => (d.events[0].timestamp = '2020-01-01T00:00:00.000Z')],
      ['metadata', (d) => ((d.events[3].metadata as { amount_cents: number }).amount_cents = 1)],
      ['actor', (d) => ((d.events[0].actor as { id: string }).id = 'key_ffffffffffffffff')],
      ['hash', (d) => (d.events[4].hash = 'sha256:' + 'f'.repeat(64))],
    ];
    for (const [field, tamper] of views) {
      const d = doc();
      tamper(d);
      expect(verifyTimeline(d)).toMatchObject({ valid: false, reason: 'view_mismatch', field });
    }
    // The stored event itself tampered: the chain breaks.
    const d = doc();
    d.events[1].stored.data.decision = 'blocked';
    expect(verifyTimeline(d)).toMatchObject({ valid: false, reason: 'hash_mismatch', broken_at_revision: 1 });
  });

  it('binds a receipt to the chain through a hash it must contain', () => {
    expect(verifyTimeline(copy(), { includesHash: served[3].hash, keys })).toMatchObject({ valid: true });
    expect(verifyTimeline(copy().slice(0, 3), { includesHash: served[3].hash })).toMatchObject({ valid: false, reason: 'hash_not_in_chain', expected: served[3].hash });
  });

  it("checks the anchor's signature against the published keys: forged, by an unknown key, or re-signed content all fail", () => {
    const withAnchor = (edit: (anchor: { payload: Record<string, unknown>; record_hash: string; signature: { key_id: string; value: string } }) => void) => {
      const es = copy();
      edit((es[5].data as { anchor: never }).anchor);
      es[5].hash = timelineEventHash(es[5]); // the chain is rebuilt, so only the anchor's own check can fail
      return es;
    };
    const flipped = withAnchor((a) => (a.signature.value = a.signature.value.replace(/^./, (c) => (c === 'A' ? 'B' : 'A'))));
    expect(verifyTimeline(flipped, { keys })).toMatchObject({ valid: false, reason: 'anchor_signature_invalid', anchor: { state: 'signature_invalid' }, actual: 'signature_invalid' });
    const edited = withAnchor((a) => (a.payload.anchored_at = '2026-11-25T11:00:00.000Z'));
    expect(verifyTimeline(edited, { keys })).toMatchObject({ valid: false, reason: 'anchor_signature_invalid', actual: 'receipt_hash_mismatch' });
    const other = new ServerSigner();
    expect(verifyTimeline(copy(), { keys: other.keysDocument() })).toMatchObject({ valid: false, reason: 'anchor_signature_invalid', actual: 'unknown_key' });
    // An anchor with events after it, or an anchor on a timeline that never ended.
    const after = copy();
    after.push({ ...after[4], revision: 6, prev_hash: after[5].hash, event_id: 'e7' });
    after[6].hash = timelineEventHash(after[6]);
    expect(verifyTimeline(after, { keys })).toMatchObject({ valid: false, reason: 'anchor_misplaced', broken_at_revision: 6 });
  });

  it('answers empty and malformed input with a reason, never throwing', () => {
    expect(verifyTimeline([])).toMatchObject({ valid: false, reason: 'empty' });
    for (const bad of [null, 'x', {}, { events: 'x' }, [null], [{ ...served[0], revision: '0' }], [{ ...served[0], metadata: null }]]) {
      expect(verifyTimeline(bad)).toMatchObject({ valid: false, reason: 'malformed' });
    }
    const lone = copy();
    (lone[0].data as Record<string, unknown>).note = '\ud800';
    expect(verifyTimeline(lone)).toMatchObject({ valid: false, reason: 'hash_mismatch', broken_at_revision: 0, expected: 'uncomputable' });
  });
});
