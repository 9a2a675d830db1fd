import { randomBytes } from 'node:crypto';
import { AccessService } from '@app/access';
import { ScopeProbeModule } from './support/scope-probe.module';
import { startTestApp, TestApp } from './support/test-app';

/**
 * Access over HTTP: keys and scopes, lanes and DIDs, throttling headers, sandbox keys, quota.
 * Each test uses its own client IP (X-Forwarded-For, with TRUST_PROXY on), so per-IP buckets
 * never leak between tests, and when Redis is configured, between runs.
 */
describe('access (e2e)', () => {
  let t: TestApp;
  let access: AccessService;
  const newIp = () => `10.${randomBytes(1)[0]}.${randomBytes(1)[0]}.${randomBytes(1)[0]}`;

  beforeAll(async () => {
    t = await startTestApp({ TRUST_PROXY: 'true' }, [ScopeProbeModule]);
    access = t.app.get(AccessService);
  });
  afterAll(() => t?.close());

  const call = (method: 'GET' | 'POST', url: string, headers: Record<string, string> = {}, ip = newIp()) =>
    t.app.inject({ method, url, headers: { 'x-forwarded-for': ip, ...headers } });
  const orgWithKey = async (scopes: Parameters<AccessService['createApiKey']>[1]['scopes'], mode: 'test' | 'live' = 'test') => {
    const org = await access.createOrganization(`e2e-${randomBytes(4).toString('hex')}`);
    return { org, key: await access.createApiKey(org.org_id, { scopes, mode }) };
  };
  const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

  describe('authentication and scopes', () => {
    it('answers 401 auth_required without a key, and for malformed or unknown bearer headers', async () => {
      const { key } = await orgWithKey(['payments:write']);
      for (const headers of <Record<string, string>[]>[
        {},
        { authorization: 'Bearer' },
        { authorization: `Basic ${key.key}` },
        { authorization: 'Bearer cdp_test_short' },
        { authorization: `Bearer ${key.key}x` },
        { authorization: `Bearer ${key.key.replace(/.$/, (c) => (c === '0' ? '1' : '0'))}` },
        { authorization: `Bearer ${key.key.replace('cdp_test_', 'cdp_live_')}` },
      ]) {
        const res = await call('GET', '/__access/payments', headers);
        expect(res.statusCode).toBe(401);
        expect(res.json()).toMatchObject({ ok: false, error: 'auth_required' });
      }
    });

    it('lets a key with the scope through and answers 403 insufficient_scope to one without', async () => {
      const ok = await orgWithKey(['payments:write']);
      const res = await call('GET', '/__access/payments', bearer(ok.key.key));
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ ok: true, org_id: ok.org.org_id });

      const readOnly = await orgWithKey(['payments:read', 'receipts:read']);
      const denied = await call('GET', '/__access/payments', bearer(readOnly.key.key));
      expect(denied.statusCode).toBe(403);
      expect(denied.json()).toMatchObject({ ok: false, error: 'insufficient_scope', details: { missing_scopes: ['payments:write'] } });
    });

    it('fails a revoked key at once', async () => {
      const { key } = await orgWithKey(['payments:write']);
      expect((await call('GET', '/api/me', bearer(key.key))).statusCode).toBe(200);
      await access.revokeApiKey(key.key_id);
      const res = await call('GET', '/api/me', bearer(key.key));
      expect(res.statusCode).toBe(401);
      expect(res.json()).toMatchObject({ error: 'auth_required' });
    });

    it("answers another organization's key 404, and a malformed key id 400", async () => {
      const a = await orgWithKey(['payments:read']);
      const b = await orgWithKey(['payments:read']);
      const own = await call('GET', `/api/keys/${a.key.key_id}`, bearer(a.key.key));
      expect(own.statusCode).toBe(200);
      expect(own.json()).toMatchObject({ key_id: a.key.key_id, org_id: a.org.org_id, status: 'active' });
      expect(JSON.stringify(own.json())).not.toContain(a.key.key.slice(9));

      const other = await call('GET', `/api/keys/${a.key.key_id}`, bearer(b.key.key));
      expect(other.statusCode).toBe(404);
      expect(other.json()).toMatchObject({ ok: false, error: 'not_found' });
      const missing = await call('GET', '/api/keys/key_0000000000000000', bearer(b.key.key));
      expect(missing.statusCode).toBe(404);
      const malformed = await call('GET', '/api/keys/not-a-key-id', bearer(b.key.key));
      expect(malformed.statusCode).toBe(400);
      expect(malformed.json()).toMatchObject({ error: 'validation_failed' });

      const list = await call('GET', '/api/keys', bearer(b.key.key));
      expect(list.json().keys.map((k: { key_id: string }) => k.key_id)).toEqual([b.key.key_id]);
    });
  });

  describe('lanes', () => {
    it('ranks authenticated over agent over anonymous, and ignores the DID on authenticated requests', async () => {
      const { key } = await orgWithKey(['payments:read']);
      const did = 'did:cd:agent:lane-test';
      const authed = await call('GET', '/api/agents/me/quota', { ...bearer(key.key), 'x-agent-did': did });
      expect(authed.json()).toMatchObject({ lane: 'authenticated', identity_key: key.key_id });
      expect(authed.json().did_status).toBeUndefined();
      const agent = await call('GET', '/api/agents/me/quota', { 'x-agent-did': did });
      expect(agent.json()).toMatchObject({ lane: 'agent', did_status: 'did_accepted' });
      expect(agent.json().identity_key).toMatch(/^did_[0-9a-f]{32}$/);
      expect(JSON.stringify(agent.json())).not.toContain('lane-test');
      const anon = await call('GET', '/api/agents/me/quota');
      expect(anon.json()).toMatchObject({ lane: 'anonymous' });
      expect(anon.json().identity_key).toMatch(/^ip_[0-9a-f]{32}$/);
    });

    it('never lets the agent lane through an authenticated route', async () => {
      for (const url of ['/__access/payments', '/api/me', '/api/keys']) {
        const res = await call('GET', url, { 'x-agent-did': 'did:cd:agent:trusted-looking-agent' });
        expect(res.statusCode).toBe(401);
        expect(res.json()).toMatchObject({ ok: false, error: 'auth_required' });
      }
    });

    it.each([
      ['did:cd:agent:' + 'x'.repeat(241), 'did_rejected:id_too_long'],
      ['did:cd:agent:' + 'x'.repeat(260), 'did_rejected:too_long'],
      ['did:cd:agent:bad char', 'did_rejected:bad_characters'],
      ['did:cd:agent:semi;colon', 'did_rejected:bad_characters'],
      ['did:example:123', 'did_rejected:bad_prefix'],
      ['did:cd:agent:', 'did_rejected:empty_id'],
    ])('gives malformed DID #%# the anonymous lane with its reason', async (did, status) => {
      const res = await call('GET', '/api/agents/me/quota', { 'x-agent-did': did });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ lane: 'anonymous', did_status: status });
    });

    it('downgrades the 11th new DID from one IP; DIDs already counted keep the agent lane', async () => {
      const ip = newIp();
      const dids = Array.from({ length: 11 }, (_, i) => `did:cd:agent:rotation-${ip}-${i}`);
      for (const did of dids.slice(0, 10)) {
        const res = await call('GET', '/__access/public', { 'x-agent-did': did }, ip);
        expect(res.json()).toMatchObject({ lane: 'agent', did_status: 'did_accepted' });
      }
      const eleventh = await call('GET', '/__access/public', { 'x-agent-did': dids[10] }, ip);
      expect(eleventh.json()).toMatchObject({ lane: 'anonymous', did_status: 'did_downgraded:per_ip_rotation_cap' });
      const first = await call('GET', '/__access/public', { 'x-agent-did': dids[0] }, ip);
      expect(first.json()).toMatchObject({ lane: 'agent', did_status: 'did_accepted' });
      // Another IP is not affected.
      expect((await call('GET', '/__access/public', { 'x-agent-did': dids[10] })).json()).toMatchObject({ lane: 'agent' });

      const quota = await call('GET', '/api/agents/me/quota', { 'x-agent-did': dids[10] }, ip);
      expect(quota.json()).toMatchObject({
        lane: 'anonymous',
        did_status: 'did_downgraded:per_ip_rotation_cap',
        agent_did_rotation: { unique_dids_in_window: 10, max: 10, window_seconds: 3600 },
      });
      expect(Date.parse(quota.json().agent_did_rotation.reset_at)).toBeGreaterThan(Date.now());
    });
  });

  describe('rate limits', () => {
    it('sends RateLimit headers on 200, then 429 rate_limited with Retry-After not before the reset', async () => {
      const ip = newIp();
      for (let i = 0; i < 60; i++) {
        const res = await call('GET', '/__access/public', {}, ip);
        expect(res.statusCode).toBe(200);
        expect(res.headers['ratelimit-limit']).toBe('60');
        expect(res.headers['ratelimit-remaining']).toBe(String(59 - i));
        expect(Number(res.headers['ratelimit-reset'])).toBeGreaterThan(0);
        expect(Object.keys(res.headers).filter((h) => h.startsWith('x-ratelimit'))).toEqual([]);
      }
      const limited = await call('GET', '/__access/public', {}, ip);
      expect(limited.statusCode).toBe(429);
      expect(limited.json()).toEqual({ ok: false, error: 'rate_limited', message: expect.any(String), retryable: true });
      expect(limited.headers['ratelimit-remaining']).toBe('0');
      expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(Number(limited.headers['ratelimit-reset']));
      // The agent lane has its own, larger bucket on the same IP.
      const agent = await call('GET', '/__access/public', { 'x-agent-did': `did:cd:agent:${ip}` }, ip);
      expect(agent.statusCode).toBe(200);
      expect(agent.headers['ratelimit-limit']).toBe('240');
    });

    it('mints 3 sandbox keys per IP per day, each a working cdp_test_ key of a fresh organization', async () => {
      const ip = newIp();
      const orgs = new Set<string>();
      for (let i = 0; i < 3; i++) {
        const res = await call('POST', '/api/sandbox/keys', {}, ip);
        expect(res.statusCode).toBe(201);
        const body = res.json();
        expect(body).toMatchObject({ key: expect.stringMatching(/^cdp_test_[0-9a-f]{64}$/), mode: 'test', sandbox: true });
        // Anonymous keys never manage keys or people.
        expect(body.scopes).toEqual(['payments:write', 'payments:read', 'receipts:read', 'webhooks:manage', 'certificates:write', 'approvals:manage']);
        const mint = await t.app.inject({ method: 'POST', url: '/api/keys', headers: bearer(body.key), payload: { scopes: ['payments:read'], mode: 'test' } });
        expect(mint.json()).toMatchObject({ error: 'insufficient_scope', details: { missing_scopes: ['keys:manage'] } });
        expect(Date.parse(body.expires_at)).toBeGreaterThan(Date.now());
        orgs.add(body.org_id);
        const me = await call('GET', '/api/me', bearer(body.key));
        expect(me.json()).toMatchObject({ org_id: body.org_id, mode: 'test', lane: 'authenticated' });
      }
      expect(orgs.size).toBe(3);
      const fourth = await call('POST', '/api/sandbox/keys', {}, ip);
      expect(fourth.statusCode).toBe(429);
      expect(fourth.json()).toMatchObject({ ok: false, error: 'rate_limited' });
      expect(Number(fourth.headers['retry-after'])).toBeGreaterThan(3600);
    });

    it("never spends the global mint budget on requests the caller's own bucket refused", async () => {
      // One IP past its 3 a day keeps asking: each ask is refused by its own bucket, and must not
      // use up the 60 a minute every caller shares (it did: 60 refused asks locked everyone out).
      const greedy = newIp();
      for (let i = 0; i < 3; i++) expect((await call('POST', '/api/sandbox/keys', {}, greedy)).statusCode).toBe(201);
      for (let i = 0; i < 61; i++) {
        const res = await call('POST', '/api/sandbox/keys', {}, greedy);
        expect(res.statusCode).toBe(429);
        expect(res.headers['ratelimit-limit']).toBe('3');
      }
      const other = await call('POST', '/api/sandbox/keys');
      expect(other.statusCode).toBe(201);
      const quota = (await call('GET', '/api/agents/me/quota')).json();
      expect(quota.buckets.sandbox_key_global_window.remaining).toBeGreaterThan(0);
    });

    it('takes the client IP from the proxy in front only: an X-Forwarded-For the client sent does not pick the bucket', async () => {
      const real = newIp();
      for (let i = 0; i < 60; i++) expect((await call('GET', '/__access/public', {}, real)).statusCode).toBe(200);
      // The proxy appends the address it saw; whatever the client put first is not the client.
      const spoofed = await call('GET', '/__access/public', {}, `${newIp()}, ${real}`);
      expect(spoofed.statusCode).toBe(429);
      const quota = (await call('GET', '/api/agents/me/quota', {}, `203.0.113.9, ${real}`)).json();
      expect(quota.buckets.public_verify_window.remaining).toBe(0);
    });

    it('counts an IPv6 client by its /64: another address of the same /64 shares the bucket, another /64 does not', async () => {
      const prefix = `2001:db8:${randomBytes(2).toString('hex')}:${randomBytes(2).toString('hex')}`;
      for (let i = 0; i < 60; i++) expect((await call('GET', '/__access/public', {}, `${prefix}::${(i + 1).toString(16)}`)).statusCode).toBe(200);
      expect((await call('GET', '/__access/public', {}, `${prefix}:ffff:ffff:ffff:ffff`)).statusCode).toBe(429);
      expect((await call('GET', '/__access/public', {}, `2001:db8:ffff:${randomBytes(2).toString('hex')}::1`)).statusCode).toBe(200);
    });

    it('reports quota without counting anything', async () => {
      const ip = newIp();
      await call('GET', '/__access/public', {}, ip);
      const before = (await call('GET', '/api/agents/me/quota', {}, ip)).json();
      for (let i = 0; i < 5; i++) await call('GET', '/api/agents/me/quota', {}, ip);
      const after = await call('GET', '/api/agents/me/quota', {}, ip);
      expect(after.statusCode).toBe(200);
      expect(after.headers['ratelimit-limit']).toBeUndefined();
      expect(after.json()).toEqual(before);
      expect(after.json()).toMatchObject({
        schema_version: 'service.quota.v1',
        lane: 'anonymous',
        lanes_available: ['anonymous', 'agent', 'authenticated'],
        buckets: {
          public_verify_window: { limit: 60, remaining: 59, window_seconds: 60 },
          demo_window: { limit: 10, remaining: 10 },
          sandbox_key_daily: { limit: 3, remaining: 3 },
          sandbox_key_global_window: { limit: 60, window_seconds: 60 },
        },
      });
    });
  });

  /**
   * Issue 12 item 7: each public surface of the spec's throttle table is its own per-IP bucket,
   * so using one surface up never blocks another.
   */
  describe('per-surface public buckets', () => {
    let certId: string;
    let datasetHash: string;
    type Req = { method: 'GET' | 'POST'; url: string; payload?: object; status: number };
    const send = (r: Req, ip: string, headers: Record<string, string> = {}) =>
      t.app.inject({ method: r.method, url: r.url, payload: r.payload, headers: { 'x-forwarded-for': ip, ...headers } });

    beforeAll(async () => {
      const { key } = await orgWithKey(['certificates:write']);
      const res = await t.app.inject({ method: 'POST', url: '/api/notary/create', headers: { ...bearer(key.key), 'x-forwarded-for': newIp() }, payload: { content: 'per-surface buckets' } });
      expect(res.statusCode).toBe(200);
      ({ certificate_id: certId, dataset_hash: datasetHash } = res.json());
    });

    // Every route of each surface, with the status it answers when not throttled.
    const certificateFetch = (): Req[] => [
      { method: 'GET', url: `/api/certificates/${certId}`, status: 200 },
      { method: 'GET', url: `/api/certificates/${certId}/signed-payload`, status: 200 },
      { method: 'GET', url: `/api/certificates/${certId}/download`, status: 200 },
      { method: 'GET', url: `/api/cert/${certId}/manifest`, status: 200 },
      { method: 'GET', url: `/verify/${certId}`, status: 200 },
    ];
    const verification = (): Req[] => [
      { method: 'POST', url: '/api/verify', payload: { certificate_id: certId }, status: 200 },
      { method: 'POST', url: '/api/verify/hash', payload: { cert_id: certId, sha256: datasetHash }, status: 200 },
      { method: 'GET', url: `/api/verify/${certId}`, status: 200 },
      { method: 'GET', url: `/api/predictions/proof?certificate_id=${certId}&hash=sha256:${'0'.repeat(64)}`, status: 404 }, // no such prediction: still counted
      { method: 'POST', url: '/api/cdp/receipts/verify', payload: { receipt: {} }, status: 200 }, // verified: false
    ];
    const registry = (): Req[] => [{ method: 'GET', url: '/v1/registry?limit=1', status: 200 }];
    const badge = (): Req[] => [{ method: 'GET', url: '/__access/badge', status: 200 }];

    /** `limit` requests over the surface's routes, all served and counted; then the next is 429. */
    const exhaust = async (routes: Req[], limit: number, ip: string) => {
      for (let i = 0; i < limit; i++) {
        const r = routes[i % routes.length];
        const res = await send(r, ip);
        expect({ url: r.url, status: res.statusCode }).toEqual({ url: r.url, status: r.status });
        expect(res.headers['ratelimit-limit']).toBe(String(limit));
        expect(res.headers['ratelimit-remaining']).toBe(String(limit - 1 - i));
      }
      for (const r of routes) {
        const limited = await send(r, ip);
        expect({ url: r.url, status: limited.statusCode }).toEqual({ url: r.url, status: 429 });
        expect(limited.headers['ratelimit-remaining']).toBe('0');
        expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
        expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(Number(limited.headers['ratelimit-reset']));
        if (!r.url.startsWith('/verify/')) expect(limited.json()).toMatchObject({ ok: false, error: 'rate_limited' });
      }
    };
    /** Every route of a surface still served from `ip`, on a fresh bucket of `limit`. */
    const expectFresh = async (routes: Req[], limit: number, ip: string) => {
      for (const [i, r] of routes.entries()) {
        const res = await send(r, ip);
        expect({ url: r.url, status: res.statusCode, limit: res.headers['ratelimit-limit'], remaining: res.headers['ratelimit-remaining'] }).toEqual({
          url: r.url,
          status: r.status,
          limit: String(limit),
          remaining: String(limit - 1 - i),
        });
      }
    };

    it('still verifies from an IP that made 60 certificate fetches, the 61st of which is 429', async () => {
      const ip = newIp();
      await exhaust(certificateFetch(), 60, ip);
      await expectFresh(verification(), 60, ip);
      await expectFresh(registry(), 60, ip);
      await expectFresh(badge(), 300, ip);
    });

    it('still fetches certificates from an IP that made 60 verifications, the 61st of which is 429', async () => {
      const ip = newIp();
      await exhaust(verification(), 60, ip);
      await expectFresh(certificateFetch(), 60, ip);
      await expectFresh(registry(), 60, ip);
    });

    it('refuses the 61st registry list from one IP, and nothing else', async () => {
      const ip = newIp();
      await exhaust(registry(), 60, ip);
      await expectFresh(certificateFetch(), 60, ip);
      await expectFresh(verification(), 60, ip);
    });

    it('refuses the 301st badge read from one IP, and nothing else', async () => {
      const ip = newIp();
      await exhaust(badge(), 300, ip);
      await expectFresh(certificateFetch(), 60, ip);
      await expectFresh(verification(), 60, ip);
      await expectFresh(registry(), 60, ip);
    });

    it('gives the agent lane its larger bucket on each surface, separately', async () => {
      const ip = newIp();
      const did = { 'x-agent-did': `did:cd:agent:surfaces-${ip}` };
      for (const [routes, limit] of [
        [certificateFetch(), 240],
        [verification(), 240],
        [registry(), 240],
        [badge(), 1200],
      ] as const) {
        const res = await send(routes[0], ip, did);
        expect({ url: routes[0].url, limit: res.headers['ratelimit-limit'], remaining: res.headers['ratelimit-remaining'] }).toEqual({
          url: routes[0].url,
          limit: String(limit),
          remaining: String(limit - 1),
        });
      }
    });

    it('reports each bucket in the quota document, counted on its own', async () => {
      const ip = newIp();
      for (let i = 0; i < 3; i++) await send(certificateFetch()[i], ip);
      for (let i = 0; i < 2; i++) await send(verification()[i], ip);
      await send(registry()[0], ip);
      for (let i = 0; i < 4; i++) await send(badge()[0], ip);
      const quota = await call('GET', '/api/agents/me/quota', {}, ip);
      expect(quota.statusCode).toBe(200);
      expect(quota.json()).toMatchObject({
        schema_version: 'service.quota.v1',
        lane: 'anonymous',
        buckets: {
          certificate_fetch_window: { limit: 60, remaining: 57, window_seconds: 60 },
          public_verify_window: { limit: 60, remaining: 58, window_seconds: 60 },
          registry_list_window: { limit: 60, remaining: 59, window_seconds: 60 },
          badge_window: { limit: 300, remaining: 296, window_seconds: 60 },
          demo_window: { limit: 10, remaining: 10 },
          sandbox_key_daily: { limit: 3, remaining: 3 },
          sandbox_key_global_window: { limit: 60, window_seconds: 60 },
        },
      });
      for (const b of Object.values(quota.json().buckets as Record<string, { reset_seconds: number }>)) expect(b.reset_seconds).toBeGreaterThanOrEqual(0);

      const agent = (await call('GET', '/api/agents/me/quota', { 'x-agent-did': `did:cd:agent:quota-${ip}` }, ip)).json();
      expect(agent).toMatchObject({
        lane: 'agent',
        buckets: {
          certificate_fetch_window: { limit: 240, remaining: 240 },
          public_verify_window: { limit: 240, remaining: 240 },
          registry_list_window: { limit: 240, remaining: 240 },
          badge_window: { limit: 1200, remaining: 1200 },
        },
      });

      // A key counts the public reads against its own per-key window.
      const { key } = await orgWithKey(['payments:read']);
      const perKey = t.config.RATE_LIMIT_KEY_PER_MINUTE;
      await send(certificateFetch()[0], ip, bearer(key.key));
      const authed = (await call('GET', '/api/agents/me/quota', bearer(key.key), ip)).json();
      expect(authed.lane).toBe('authenticated');
      for (const name of ['certificate_fetch_window', 'public_verify_window', 'registry_list_window', 'badge_window']) {
        expect({ name, ...authed.buckets[name] }).toMatchObject({ name, limit: perKey, remaining: perKey - 1 });
      }
    });
  });
});
