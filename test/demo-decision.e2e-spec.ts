import { randomBytes } from 'node:crypto';
import { EventStore } from '@app/event-store';
import { verifyReceipt } from '@app/sdk';
import { startTestApp, TestApp } from './support/test-app';

/** POST /api/demo/decision-ledger: anyone decides a request against the fixed demo policy and gets the signed record; 10 per 15 min per IP. */
describe('decision-ledger demo (e2e)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ TRUST_PROXY: 'true' });
  }, 60_000);
  afterAll(() => t?.close());

  const ip = () => `10.${randomBytes(1)[0]}.${randomBytes(1)[0]}.${randomBytes(1)[0]}`;
  const demo = (payload: unknown, from = ip()) =>
    t.app.inject({ method: 'POST', url: '/api/demo/decision-ledger', payload: payload as object, headers: { 'x-forwarded-for': from } });
  const request = (over: Record<string, unknown> = {}) => ({
    amount_cents: 1_500,
    currency: 'USD',
    merchant_id: 'm_books',
    purpose_tag: 'software',
    expiration_iso: new Date(Date.now() + 3600_000).toISOString(),
    ...over,
  });

  it('decides anonymously against the demo policy, signs the record like a real one (demo: true), records nothing', async () => {
    const store = t.app.get(EventStore);
    const from = await store.headPosition();
    const res = await demo(request());
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ demo: true, decision: 'authorized', reason_code: null, policy_hash: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(body.decision_record).toMatchObject({ schema_version: 'payment_decision.v1', payload: { demo: true, organization_id: null, transaction_id: null, decision: 'authorized', policy_id: 'demo' } });
    const keys = (await t.app.inject({ method: 'GET', url: '/.well-known/signing-keys.json' })).json();
    expect(verifyReceipt(body.decision_record, keys, { expectedSchema: 'payment_decision.v1' })).toMatchObject({ valid: true });
    expect(verifyReceipt(body.decision_record, keys)).toMatchObject({ valid: false, reason: 'unexpected_schema_version' });
    const forged = { ...body.decision_record, payload: { ...body.decision_record.payload, decision: 'blocked' } };
    expect(verifyReceipt(forged, keys, { expectedSchema: 'payment_decision.v1' })).toMatchObject({ valid: false, reason: 'receipt_hash_mismatch' });

    expect((await demo(request({ amount_cents: 25_000 }))).json()).toMatchObject({ decision: 'needs_review', reason_code: 'REVIEW_REQUIRED' });
    expect((await demo(request({ merchant_id: 'm_blocked_demo' }))).json()).toMatchObject({ decision: 'blocked', reason_code: 'MERCHANT_BLOCKED' });
    expect((await demo(request({ currency: 'JPY', amount_cents: 100 }))).json()).toMatchObject({ decision: 'blocked', reason_code: 'AMOUNT_EXCEEDS_LIMIT' });
    // Nothing of the demo reached the store (other suites may append meanwhile; none of theirs is a demo).
    await new Promise((r) => setTimeout(r, 100));
    const since = (await store.readAll({ fromPosition: from, limit: 10_000 })).events;
    expect(since.filter((e) => JSON.stringify(e.data).includes('m_blocked_demo') || JSON.stringify(e.data).includes('"demo":true'))).toEqual([]);
  });

  it('refuses bad input with 400 naming the field', async () => {
    const res = await demo(request({ amount_cents: 'lots' }));
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: 'validation_failed', details: [expect.objectContaining({ field: 'amount_cents' })] });
  });

  it('allows 10 per 15 minutes per IP, then 429 with Retry-After; another IP is unaffected', async () => {
    const from = ip();
    for (let i = 0; i < 10; i++) expect((await demo(request(), from)).statusCode).toBe(200);
    const limited = await demo(request(), from);
    expect(limited.statusCode).toBe(429);
    expect(limited.json()).toMatchObject({ ok: false, error: 'rate_limited', retryable: true });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(limited.headers['ratelimit-limit']).toBe('10');
    expect((await demo(request())).statusCode).toBe(200);
  });
});
