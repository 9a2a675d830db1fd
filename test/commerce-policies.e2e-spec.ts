import { createHash, randomBytes } from 'node:crypto';
import { AccessService, Scope } from '@app/access';
import { policyStream } from '@app/commerce';
import { canonicalJson } from '@app/crypto';
import { EventStore } from '@app/event-store';
import { startTestApp, TestApp } from './support/test-app';

/** Policies over HTTP: versions, reads, simulation and bad input (issue 5, policies). */
describe('commerce policies (e2e)', () => {
  let t: TestApp;
  let access: AccessService;
  beforeAll(async () => {
    t = await startTestApp({ TRUST_PROXY: 'true' });
    access = t.app.get(AccessService);
  });
  afterAll(async () => {
    await t?.close();
  });

  const ip = () => `10.${randomBytes(1)[0]}.${randomBytes(1)[0]}.${randomBytes(1)[0]}`;
  const org = async (scopes: Scope[] = ['payments:write', 'payments:read']) => {
    const o = await access.createOrganization(`policies-${randomBytes(3).toString('hex')}`);
    const k = await access.createApiKey(o.org_id, { scopes, mode: 'test' });
    return { orgId: o.org_id, key: k.key, keyId: k.key_id, keyWith: async (s: Scope[]) => (await access.createApiKey(o.org_id, { scopes: s, mode: 'test' })).key };
  };
  const call = (method: 'GET' | 'PUT' | 'POST', url: string, key: string | null, payload?: unknown, headers: Record<string, string> = {}) =>
    t.app.inject({
      method,
      url,
      headers: { 'x-forwarded-for': ip(), ...(key ? { authorization: `Bearer ${key}` } : {}), ...headers },
      ...(payload === undefined ? {} : typeof payload === 'string' ? { payload, headers: { 'content-type': 'application/json', 'x-forwarded-for': ip(), ...(key ? { authorization: `Bearer ${key}` } : {}) } } : { payload: payload as object }),
    });
  const put = (key: string | null, id: string, policy: unknown) => call('PUT', `/api/cdp/policies/${id}`, key, policy);
  const get = (key: string | null, path: string) => call('GET', `/api/cdp/policies/${path}`, key);
  const simulate = (key: string | null, id: string, request: unknown) => call('POST', `/api/cdp/policies/${id}/simulate`, key, request);

  const designPolicy = () => ({
    limits: { USD: { per_transaction_cents: 50000, review_above_cents: 20000 } },
    spend_caps: [{ window: 'daily', currency: 'USD', amount_cents: 100000 }],
    merchants: { blocked: ['m_bad'], allowed: null },
    purposes: { permitted: ['travel', 'software'] },
    agents: { 'agent-7': { per_transaction_cents: 1000 } },
  });
  const hashOf = (p: unknown) => createHash('sha256').update(canonicalJson(p)).digest('hex');
  const inAnHour = () => new Date(Date.now() + 3_600_000).toISOString();
  const request = (over: Record<string, unknown> = {}) => ({
    amount_cents: 1250,
    currency: 'USD',
    merchant_id: 'm_good',
    purpose_tag: 'travel',
    expiration_iso: inAnHour(),
    ...over,
  });

  it('records versions: PUT stores version 1, an equal document changes nothing, a changed one is version 2', async () => {
    const { orgId, key, keyId } = await org();
    const first = await put(key, 'default', designPolicy());
    expect(first.statusCode).toBe(200);
    const v1 = first.json();
    expect(v1).toEqual({ policy_id: 'default', version: 1, policy_hash: hashOf(designPolicy()), policy: designPolicy(), created_at: expect.any(String), recorded: true });
    expect(v1.policy_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(new Date(v1.created_at).toISOString()).toBe(v1.created_at);

    // The same policy, keys reordered and pretty-printed: same JCS hash, no new version.
    const p = designPolicy();
    const same = await call('PUT', '/api/cdp/policies/default', key, JSON.stringify({ agents: p.agents, spend_caps: p.spend_caps, purposes: p.purposes, merchants: p.merchants, limits: p.limits }, null, 2));
    expect(same.statusCode).toBe(200);
    expect(same.json()).toEqual({ ...v1, recorded: false });

    const changed = { ...designPolicy(), purposes: { permitted: ['travel'] } };
    const v2 = (await put(key, 'default', changed)).json();
    expect(v2).toMatchObject({ policy_id: 'default', version: 2, policy_hash: hashOf(changed), policy: changed, recorded: true });

    const events = await t.app.get(EventStore).readStream(policyStream(orgId, 'default'));
    expect(events.map((e) => [e.type, e.revision, e.data])).toEqual([
      ['policy.version_recorded', 0, { organization_id: orgId, policy_id: 'default', version: 1, policy: designPolicy(), policy_hash: v1.policy_hash }],
      ['policy.version_recorded', 1, { organization_id: orgId, policy_id: 'default', version: 2, policy: changed, policy_hash: v2.policy_hash }],
    ]);
    expect(events[0].metadata).toMatchObject({ actor: `api_key:${keyId}` });
  });

  it('keeps versions dense under concurrent PUTs, and records one version for the same document sent at once', async () => {
    const { key } = await org();
    const docs = Array.from({ length: 12 }, (_, i) => ({ limits: { USD: { per_transaction_cents: 100 + i } } }));
    const results = await Promise.all(docs.map((d) => put(key, 'busy', d)));
    expect(results.map((r) => r.statusCode)).toEqual(docs.map(() => 200));
    expect(results.map((r) => r.json().version).sort((a: number, b: number) => a - b)).toEqual(docs.map((_, i) => i + 1));
    const history = (await get(key, 'busy/versions')).json().versions;
    expect(history.map((v: { version: number }) => v.version)).toEqual(docs.map((_, i) => 12 - i));

    const same = await Promise.all(Array.from({ length: 8 }, () => put(key, 'calm', designPolicy())));
    expect(same.map((r) => r.json().version)).toEqual(same.map(() => 1));
    expect(same.filter((r) => r.json().recorded)).toHaveLength(1);
  });

  it('reads the current version, the history newest first, and one version', async () => {
    const { key, keyWith } = await org();
    await put(key, 'travel_2026', { limits: { EUR: { per_transaction_cents: 100 } } });
    await put(key, 'travel_2026', { limits: { EUR: { per_transaction_cents: 200 } } });
    await put(key, 'travel_2026', { limits: { EUR: { per_transaction_cents: 300 } } });

    const reader = await keyWith(['payments:read']);
    const writer = await keyWith(['payments:write']);
    for (const k of [reader, writer]) {
      const current = await get(k, 'travel_2026');
      expect(current.statusCode).toBe(200);
      expect(current.json()).toMatchObject({ policy_id: 'travel_2026', version: 3, policy: { limits: { EUR: { per_transaction_cents: 300 } } } });
    }
    const history = (await get(reader, 'travel_2026/versions')).json();
    expect(history.policy_id).toBe('travel_2026');
    expect(history.versions.map((v: { version: number; policy: { limits: { EUR: { per_transaction_cents: number } } } }) => [v.version, v.policy.limits.EUR.per_transaction_cents])).toEqual([
      [3, 300],
      [2, 200],
      [1, 100],
    ]);
    const second = await get(reader, 'travel_2026/versions/2');
    expect(second.statusCode).toBe(200);
    expect(second.json()).toEqual(history.versions[1]);
    expect((await get(reader, 'travel_2026/versions/4')).statusCode).toBe(404);
    expect((await get(reader, 'nope')).json()).toMatchObject({ ok: false, error: 'not_found' });
    expect((await get(reader, 'nope/versions')).statusCode).toBe(404);
  });

  it("answers 404 for another organization's policy, on every route", async () => {
    const a = await org();
    const b = await org();
    await put(a.key, 'shared-name', designPolicy());
    for (const path of ['shared-name', 'shared-name/versions', 'shared-name/versions/1']) {
      const res = await get(b.key, path);
      expect([path, res.statusCode, res.json().error]).toEqual([path, 404, 'not_found']);
    }
    expect((await simulate(b.key, 'shared-name', request())).statusCode).toBe(404);
    // Both organizations may use the same policy id independently.
    expect((await put(b.key, 'shared-name', {})).json()).toMatchObject({ version: 1, policy: {} });
    expect((await get(a.key, 'shared-name')).json()).toMatchObject({ version: 1, policy: designPolicy() });
  });

  it('simulates a request against the current version and records nothing', async () => {
    const { orgId, key, keyWith } = await org();
    const v = (await put(key, 'default', designPolicy())).json();
    const store = t.app.get(EventStore);
    const before = (await store.readStream(policyStream(orgId, 'default'))).length;

    const ok = await simulate(await keyWith(['payments:read']), 'default', request());
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toMatchObject({
      policy_id: 'default',
      version: 1,
      policy_hash: v.policy_hash,
      decision: 'authorized',
      reason_code: null,
      spend_caps_evaluated_against: 'recorded_spend',
      evaluated_at: expect.any(String),
    });
    expect(ok.json().checks.map((c: { rule: string }) => c.rule)).toEqual(['expiry', 'policy', 'merchant_blocked', 'purpose_permitted', 'currency_limit', 'spend_cap', 'review_threshold']);

    const outcomes: Array<[Record<string, unknown>, string, string | null]> = [
      [{ amount_cents: 50001 }, 'blocked', 'AMOUNT_EXCEEDS_LIMIT'],
      [{ currency: 'EUR' }, 'blocked', 'AMOUNT_EXCEEDS_LIMIT'],
      [{ delegated_authority: 'agent-7', amount_cents: 1001 }, 'blocked', 'AMOUNT_EXCEEDS_LIMIT'],
      [{ merchant_id: 'm_bad' }, 'blocked', 'MERCHANT_BLOCKED'],
      [{ purpose_tag: 'gambling' }, 'blocked', 'PURPOSE_NOT_PERMITTED'],
      [{ expiration_iso: '2020-01-01T00:00:00Z' }, 'blocked', 'EXPIRED'],
      [{ amount_cents: 20001 }, 'needs_review', 'REVIEW_REQUIRED'],
      [{ policy_id: 'default' }, 'authorized', null],
    ];
    for (const [over, decision, reason] of outcomes) {
      const res = await simulate(key, 'default', request(over));
      expect([over, res.statusCode, res.json().decision, res.json().reason_code]).toEqual([over, 200, decision, reason]);
    }
    expect((await store.readStream(policyStream(orgId, 'default'))).length).toBe(before);
    expect((await get(key, 'default/versions')).json().versions).toHaveLength(1);

    // Spend caps are evaluated against what the organization's authorizations have reserved.
    for (let i = 0; i < 5; i++) {
      const res = await t.app.inject({ method: 'POST', url: '/api/cdp/authorize', payload: request({ amount_cents: 19_000 }), headers: { authorization: `Bearer ${key}` } });
      expect(res.json().decision).toBe('authorized');
    }
    const capped = await simulate(key, 'default', request({ amount_cents: 10_000 }));
    expect(capped.json()).toMatchObject({ decision: 'blocked', reason_code: 'SPEND_CAP_EXCEEDED' });
    expect((await simulate(key, 'default', request({ amount_cents: 5_000 }))).json()).toMatchObject({ decision: 'authorized' });
  });

  it('refuses a simulation naming another policy in the body, or of a policy that does not exist', async () => {
    const { key } = await org();
    await put(key, 'default', {});
    const mismatch = await simulate(key, 'default', request({ policy_id: 'other' }));
    expect(mismatch.statusCode).toBe(400);
    expect(mismatch.json()).toMatchObject({ error: 'validation_failed', details: [{ field: 'policy_id' }] });
    expect((await simulate(key, 'missing', request())).json()).toMatchObject({ error: 'not_found' });
  });

  it('validates simulation requests as payment_authorization.v1 (400 validation_failed naming fields)', async () => {
    const { key } = await org();
    await put(key, 'default', {});
    const cases: Array<[unknown, string[]]> = [
      [{}, ['amount_cents', 'currency', 'merchant_id', 'purpose_tag', 'expiration_iso']],
      [request({ amount_cents: '1250' }), ['amount_cents']],
      [request({ amount_cents: 12.5 }), ['amount_cents']],
      [request({ amount_cents: -1 }), ['amount_cents']],
      [request({ amount_cents: 0 }), ['amount_cents']],
      [request({ currency: 'XYZ' }), ['currency']],
      [request({ currency: 'usd' }), ['currency']],
      [request({ merchant_id: 'Acme Corp' }), ['merchant_id']],
      [request({ expiration_iso: '2026-13-01T00:00:00Z' }), ['expiration_iso']],
      [request({ expiration_iso: '2026-12-01' }), ['expiration_iso']],
      [request({ surprise: true }), ['surprise']],
      [[request()], ['']],
    ];
    for (const [body, fields] of cases) {
      const res = await simulate(key, 'default', body);
      expect([body, res.statusCode, res.json().error, res.json().details?.map((d: { field: string }) => d.field)]).toEqual([body, 400, 'validation_failed', fields]);
    }
    const currency = await simulate(key, 'default', request({ currency: 'XYZ' }));
    expect(currency.json().details[0].message).toContain('XYZ');
  });

  it('validates policies (400 invalid_policy naming fields) and records nothing for them', async () => {
    const { orgId, key } = await org();
    const cases: Array<[unknown, string[]]> = [
      [{ limits: { USD: { per_transaction_cents: -5 } } }, ['limits.USD.per_transaction_cents']],
      [{ limits: { USD: { per_transaction_cents: 10.5 } } }, ['limits.USD.per_transaction_cents']],
      [{ limits: { USD: { per_transaction_cents: '100' } } }, ['limits.USD.per_transaction_cents']],
      [{ limits: { XYZ: {} } }, ['limits.XYZ']],
      [{ limits: { USD: { per_transaction_cents: 10, review_above_cents: 20 } } }, ['limits.USD.review_above_cents']],
      [{ spend_caps: [{ window: 'hourly', currency: 'USD', amount_cents: 1 }] }, ['spend_caps.0.window']],
      [{ spend_caps: [{ window: 'daily', currency: 'USD' }] }, ['spend_caps.0.amount_cents']],
      [{ merchants: { blocked: ['Bad Merchant'] } }, ['merchants.blocked.0']],
      [{ purposes: { permitted: 'travel' } }, ['purposes.permitted']],
      [{ unknown_rule: true }, ['unknown_rule']],
      [[], ['']],
      ['"a string"', ['']],
    ];
    for (const [body, fields] of cases) {
      const res = await put(key, 'strict', body);
      expect([body, res.statusCode, res.json().error, res.json().details?.map((d: { field: string }) => d.field)]).toEqual([body, 400, 'invalid_policy', fields]);
    }
    const empty = await call('PUT', '/api/cdp/policies/strict', key);
    expect(empty.statusCode).toBe(400);
    expect(empty.json()).toMatchObject({ ok: false, error: 'invalid_policy' });
    expect(await t.app.get(EventStore).readStream(policyStream(orgId, 'strict'))).toEqual([]);
    expect((await get(key, 'strict')).statusCode).toBe(404);
  });

  it('answers 400 for malformed ids and versions, 400 for malformed JSON, 413 for an oversized body', async () => {
    const { key } = await org();
    for (const [method, url] of [
      ['PUT', '/api/cdp/policies/has.dot'],
      ['GET', `/api/cdp/policies/${'x'.repeat(65)}`],
      ['GET', '/api/cdp/policies/bad%20id'],
      ['GET', '/api/cdp/policies/bad%20id/versions'],
      ['GET', '/api/cdp/policies/ok/versions/0'],
      ['GET', '/api/cdp/policies/ok/versions/-1'],
      ['GET', '/api/cdp/policies/ok/versions/1.5'],
      ['GET', '/api/cdp/policies/ok/versions/abc'],
      ['POST', '/api/cdp/policies/bad%21/simulate'],
    ] as Array<['GET' | 'PUT' | 'POST', string]>) {
      const res = await call(method, url, key, method === 'GET' ? undefined : {});
      expect([url, res.statusCode, res.json().error]).toEqual([url, 400, 'validation_failed']);
    }
    const badJson = await call('PUT', '/api/cdp/policies/default', key, '{"limits": ');
    expect(badJson.statusCode).toBe(400);
    expect(badJson.json()).toMatchObject({ ok: false, error: 'invalid_json' });
    const huge = { merchants: { blocked: Array.from({ length: 20000 }, (_, i) => `merchant_${i}_${'x'.repeat(60)}`) } };
    const big = await put(key, 'default', huge);
    expect(big.statusCode).toBe(413);
    expect(big.json()).toMatchObject({ ok: false, error: 'payload_too_large' });
  });

  it('needs a key (401), and the scopes: payments:write to PUT, payments:read or :write to read and simulate (403)', async () => {
    const { key, keyWith } = await org();
    await put(key, 'default', {});
    for (const [method, url, body] of [
      ['PUT', '/api/cdp/policies/default', {}],
      ['GET', '/api/cdp/policies/default', undefined],
      ['GET', '/api/cdp/policies/default/versions', undefined],
      ['GET', '/api/cdp/policies/default/versions/1', undefined],
      ['POST', '/api/cdp/policies/default/simulate', request()],
    ] as Array<['GET' | 'PUT' | 'POST', string, unknown]>) {
      const none = await call(method, url, null, body);
      expect([url, none.statusCode, none.json().error]).toEqual([url, 401, 'auth_required']);
      const bogus = await call(method, url, `cdp_test_${'0'.repeat(64)}`, body);
      expect([url, bogus.statusCode]).toEqual([url, 401]);
      const unrelated = await call(method, url, await keyWith(['receipts:read']), body);
      expect([url, unrelated.statusCode, unrelated.json().error]).toEqual([url, 403, 'insufficient_scope']);
    }
    const readOnly = await put(await keyWith(['payments:read']), 'default', {});
    expect(readOnly.statusCode).toBe(403);
    expect(readOnly.json()).toMatchObject({ error: 'insufficient_scope', details: { missing_scopes: ['payments:write'] } });
  });
});
