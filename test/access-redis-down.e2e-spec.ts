import { AccessService } from '@app/access';
import { ScopeProbeModule } from './support/scope-probe.module';
import { startTestApp, TestApp } from './support/test-app';

/**
 * Redis configured but unreachable: each surface fails the way the README states.
 * Sandbox key minting fails closed (503); quota, authenticated calls and public reads fail
 * open; an agent DID cannot be checked against the rotation cap, so it gets the anonymous lane.
 */
describe('access with Redis unreachable', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ REDIS_URL: 'redis://127.0.0.1:1' }, [ScopeProbeModule]);
  });
  afterAll(() => t?.close());

  it('fails sandbox key minting closed with 503, Retry-After and the RateLimit headers (none left until the retry)', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/api/sandbox/keys' });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ ok: false, error: 'rate_limiter_unavailable' });
    expect(res.headers['retry-after']).toBe('5');
    expect([res.headers['ratelimit-limit'], res.headers['ratelimit-remaining'], res.headers['ratelimit-reset']]).toEqual(['3', '0', '5']);
  });

  it('serves authenticated calls without counting (fail open)', async () => {
    const access = t.app.get(AccessService);
    const org = await access.createOrganization('redis-down');
    const key = await access.createApiKey(org.org_id, { scopes: ['payments:read'], mode: 'test' });
    const res = await t.app.inject({ method: 'GET', url: '/api/me', headers: { authorization: `Bearer ${key.key}` } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['ratelimit-limit']).toBeUndefined();
  });

  it('serves each public read surface without counting (fail open)', async () => {
    const unknown = '00000000-0000-4000-8000-000000000000';
    for (const [method, url, payload, status] of [
      ['GET', `/api/certificates/${unknown}`, undefined, 404],
      ['GET', `/verify/${unknown}`, undefined, 404],
      ['POST', '/api/verify/hash', { hash: `sha256:${'0'.repeat(64)}` }, 200],
      ['GET', '/v1/registry?limit=1', undefined, 200],
      ['GET', '/__access/badge', undefined, 200],
    ] as const) {
      const res = await t.app.inject({ method, url, payload });
      expect({ url, status: res.statusCode, limit: res.headers['ratelimit-limit'] }).toEqual({ url, status, limit: undefined });
    }
  });

  it('still answers quota, marked degraded, and gives a DID the anonymous lane', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/agents/me/quota', headers: { 'x-agent-did': 'did:cd:agent:x' } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ lane: 'anonymous', did_status: 'did_rejected:rotation_check_unavailable', degraded: true });
    expect(res.json().buckets).toMatchObject({
      certificate_fetch_window: { limit: 60, remaining: 60 },
      public_verify_window: { limit: 60, remaining: 60 },
      registry_list_window: { limit: 60, remaining: 60 },
      badge_window: { limit: 300, remaining: 300 },
    });
  });
});
