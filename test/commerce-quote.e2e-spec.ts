import { AccessService } from '@app/access';
import { startTestApp, TestApp } from './support/test-app';

/** POST /api/cdp/quote: what authorize would decide now, against the caller's policy and spend; nothing recorded. */
describe('commerce quote (e2e)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMITS: 'off' });
  }, 60_000);
  afterAll(() => t?.close());

  const call = (method: 'GET' | 'POST' | 'PUT', url: string, key: string, payload?: unknown) =>
    t.app.inject({ method, url, ...(payload === undefined ? {} : { payload: payload as object }), headers: { authorization: `Bearer ${key}` } });
  const request = (over: Record<string, unknown> = {}) => ({
    amount_cents: 1_500,
    currency: 'USD',
    merchant_id: 'm_books',
    purpose_tag: 'software',
    expiration_iso: new Date(Date.now() + 3600_000).toISOString(),
    ...over,
  });

  it('quotes authorized, needs_review and blocked exactly as authorize then decides, records and reserves nothing', async () => {
    const access = t.app.get(AccessService);
    const org = await access.createOrganization('quotes');
    const { key } = await access.createApiKey(org.org_id, { scopes: ['payments:write', 'payments:read'], mode: 'test' });
    expect((await call('POST', '/api/cdp/quote', key, request())).json()).toMatchObject({ quoted: true, decision: 'blocked', reason_code: 'POLICY_NOT_FOUND', version: null });

    const policy = { limits: { USD: { per_transaction_cents: 50_000, review_above_cents: 20_000 } }, merchants: { blocked: ['m_bad'] }, spend_caps: [{ window: 'daily', currency: 'USD', amount_cents: 10_000 }] };
    expect((await call('PUT', '/api/cdp/policies/default', key, policy)).statusCode).toBe(200);
    const cases = [request({ amount_cents: 1_000 }), request({ merchant_id: 'm_bad' }), request({ amount_cents: 60_000 })];
    const quotes = [];
    for (const body of cases) {
      const q = await call('POST', '/api/cdp/quote', key, body);
      expect(q.statusCode).toBe(200);
      quotes.push(q.json());
    }
    expect(quotes.map((q) => [q.decision, q.reason_code])).toEqual([
      ['authorized', null],
      ['blocked', 'MERCHANT_BLOCKED'],
      ['blocked', 'AMOUNT_EXCEEDS_LIMIT'],
    ]);
    expect(quotes[0]).toMatchObject({ policy_id: 'default', version: 1, spend_caps_evaluated_against: 'recorded_spend' });
    // Nothing recorded: no transaction, and the cap still has all its room.
    expect((await call('GET', '/api/cdp/transactions', key)).json().items).toEqual([]);
    for (let i = 0; i < 20; i++) expect((await call('POST', '/api/cdp/quote', key, request({ amount_cents: 9_000 }))).json().decision).toBe('authorized');
    // Authorize agrees with the quote; then the spend it reserved shows in the next quote.
    expect((await call('POST', '/api/cdp/authorize', key, request({ amount_cents: 9_000 }))).json()).toMatchObject({ decision: 'authorized' });
    expect((await call('POST', '/api/cdp/quote', key, request({ amount_cents: 2_000 }))).json()).toMatchObject({ decision: 'blocked', reason_code: 'SPEND_CAP_EXCEEDED' });
  });

  it('refuses bad input (400 naming the field), a key without a payments scope (403) and no key (401)', async () => {
    const access = t.app.get(AccessService);
    const org = await access.createOrganization('quotes-bad');
    const { key } = await access.createApiKey(org.org_id, { scopes: ['payments:read'], mode: 'test' });
    const bad = await call('POST', '/api/cdp/quote', key, request({ amount_cents: -5 }));
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ error: 'validation_failed', details: [expect.objectContaining({ field: 'amount_cents' })] });
    const other = await access.createApiKey(org.org_id, { scopes: ['receipts:read'], mode: 'test' });
    expect((await call('POST', '/api/cdp/quote', other.key, request())).statusCode).toBe(403);
    expect((await t.app.inject({ method: 'POST', url: '/api/cdp/quote', payload: request() })).statusCode).toBe(401);
  });
});
