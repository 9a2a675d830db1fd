import { randomBytes } from 'node:crypto';
import { timelineEntry } from '@app/commerce';
import { openTestStore } from '../../../../test/support/test-store';
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

  beforeAll(async () => {
    t = await openTestStore();
    const txn = `txn_${randomBytes(16).toString('hex')}`;
    stream = `transaction-${txn}`;
    for (const batch of lifecycle(txn, `auth_${randomBytes(16).toString('hex')}`)) await t.store.append(stream, batch);
    // As an HTTP endpoint would serve them: through JSON.
    served = JSON.parse(JSON.stringify(await t.store.readStream(stream)));
  });
  afterAll(async () => {
    await t?.dispose();
  });

  const copy = (): TimelineEvent[] => JSON.parse(JSON.stringify(served));

  it('recomputes every hash the store recorded and accepts the genuine chain', async () => {
    expect(served).toHaveLength(5);
    expect((await t.store.verifyStream(stream)).valid).toBe(true);
    for (const e of served) expect(timelineEventHash(e)).toBe(e.hash);
    expect(verifyTimeline(served)).toEqual({ valid: true, events: 5, stream_id: stream, last_hash: served[4].hash });
    expect(verifyTimeline({ events: served }, { streamId: stream, lastHash: served[4].hash })).toMatchObject({ valid: true });
    expect(verifyTimeline([...served].reverse())).toMatchObject({ valid: true }); // any order in, revision order checked
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

  it('catches a cut-off end only against a known last hash (e.g. from the receipt)', () => {
    const truncated = copy().slice(0, 4);
    expect(verifyTimeline(truncated)).toMatchObject({ valid: true, events: 4 });
    expect(verifyTimeline(truncated, { lastHash: served[4].hash })).toMatchObject({ valid: false, reason: 'last_hash_mismatch', broken_at_revision: 4, expected: served[4].hash, actual: served[3].hash });
    // Rewriting the last event and its hash passes the chain but not the receipt's last hash.
    const rewritten = copy();
    (rewritten[4].data as { receipt_hash: string }).receipt_hash = 'sha256:' + 'e'.repeat(64);
    rewritten[4].hash = timelineEventHash(rewritten[4]);
    expect(verifyTimeline(rewritten)).toMatchObject({ valid: true });
    expect(verifyTimeline(rewritten, { lastHash: served[4].hash })).toMatchObject({ valid: false, reason: 'last_hash_mismatch' });
    expect(verifyTimeline(copy(), { streamId: 'transaction-txn_other' })).toMatchObject({ valid: false, reason: 'stream_mismatch', broken_at_revision: 0 });
  });

  it('checks the served timeline: entries carry their stored event, and what is shown must match it', () => {
    const txn = stream.slice('transaction-'.length);
    const doc = () => JSON.parse(JSON.stringify({ transaction_id: txn, chain_valid: true, events: served.map((e) => timelineEntry(e as never)) }));
    expect(verifyTimeline(doc())).toEqual({ valid: true, events: 5, stream_id: stream, last_hash: served[4].hash });
    expect(verifyTimeline(doc().events, { transactionId: txn })).toMatchObject({ valid: true });
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
    expect(verifyTimeline(copy(), { includesHash: served[3].hash })).toMatchObject({ valid: true });
    expect(verifyTimeline(copy().slice(0, 3), { includesHash: served[3].hash })).toMatchObject({ valid: false, reason: 'hash_not_in_chain', expected: served[3].hash });
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
