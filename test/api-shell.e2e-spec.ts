import { AddressInfo } from 'node:net';
import { AccessService } from '@app/access';
import { Lifecycle } from '@app/platform';
import { EventStore } from '@app/event-store';
import { ProbeModule } from './support/probe.module';
import { startTestApp, TestApp } from './support/test-app';

const UUID = /^[0-9a-f-]{36}$/;

describe('service shell (api)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({}, [ProbeModule]);
  });
  afterAll(async () => {
    await t?.close();
  });
  const inject = (opts: Parameters<TestApp['app']['inject']>[0]) => t.app.inject(opts);

  describe('health', () => {
    it('answers GET /healthz 200 with a request id', async () => {
      const res = await inject({ method: 'GET', url: '/healthz' });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ ok: true, status: 'up' });
      expect(res.headers['x-request-id']).toMatch(UUID);
    });

    it('keeps a sane caller X-Request-Id and replaces an unsafe one', async () => {
      const kept = await inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'trace-abc.123' } });
      expect(kept.headers['x-request-id']).toBe('trace-abc.123');
      const replaced = await inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'bad id\u0007<script>' } });
      expect(replaced.headers['x-request-id']).toMatch(UUID);
    });

    it('answers GET /readyz 200 when the store (and Redis, when configured) is up', async () => {
      const res = await inject({ method: 'GET', url: '/readyz' });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({
        ok: true,
        checks: { store: 'up', redis: process.env.REDIS_URL ? 'up' : 'not_configured', draining: false },
      });
    });
  });

  describe('error envelope', () => {
    it('answers unknown routes and methods 404 in the envelope', async () => {
      for (const [method, url] of [
        ['GET', '/no/such/route'],
        ['DELETE', '/healthz'],
        ['POST', '/api/nothing-here'],
      ] as const) {
        const res = await inject({ method, url });
        expect(res.statusCode).toBe(404);
        expect(res.headers['content-type']).toMatch(/^application\/json/);
        expect(res.json()).toEqual({ ok: false, error: 'not_found', message: expect.any(String), retryable: false });
      }
    });

    it('answers malformed, empty and prototype-poisoning JSON 400 invalid_json', async () => {
      const bodies = ['{"name": "x",', '', '{"__proto__": {"admin": true}, "name": "x", "count": 1}', '{"constructor": {"prototype": {"x": 1}}}'];
      for (const payload of bodies) {
        const res = await inject({ method: 'POST', url: '/__probe/echo', headers: { 'content-type': 'application/json' }, payload });
        expect(res.statusCode).toBe(400);
        expect(res.json()).toEqual({ ok: false, error: 'invalid_json', message: expect.any(String), retryable: false });
      }
    });

    it('answers bodies over the size limit 413 payload_too_large', async () => {
      const payload = JSON.stringify({ name: 'x'.repeat(t.config.BODY_LIMIT_BYTES + 1), count: 1 });
      const res = await inject({ method: 'POST', url: '/__probe/echo', headers: { 'content-type': 'application/json' }, payload });
      expect(res.statusCode).toBe(413);
      expect(res.json()).toEqual({ ok: false, error: 'payload_too_large', message: expect.any(String), retryable: false });
    });

    it('answers an unsupported content type 415, text/plain with a JSON-looking body and a body without Content-Type too', async () => {
      for (const headers of [{ 'content-type': 'application/xml' }, { 'content-type': 'text/plain' }, { 'content-type': 'text/plain; charset=utf-8' }, { 'content-type': 'application/x-www-form-urlencoded' }, {}]) {
        const payload = headers['content-type'] === 'application/xml' ? '<a/>' : '{"name":"a","count":2}';
        const res = await inject({ method: 'POST', url: '/__probe/echo', headers, payload });
        expect([headers, res.statusCode]).toEqual([headers, 415]);
        expect(res.headers['content-type']).toMatch(/^application\/json/);
        expect(res.json()).toEqual({ ok: false, error: 'unsupported_media_type', message: expect.any(String), retryable: false });
      }
      // The same body as JSON is accepted (also with a charset).
      const json = await inject({ method: 'POST', url: '/__probe/echo', headers: { 'content-type': 'application/json; charset=utf-8' }, payload: '{"name":"a","count":2}' });
      expect(json.statusCode).toBe(201);
    });

    it('answers the JSON routes 415 for a JSON-looking text/plain body, before anything runs', async () => {
      const access = t.app.get(AccessService);
      const org = await access.createOrganization('content-type');
      const { key } = await access.createApiKey(org.org_id, { scopes: ['payments:write', 'payments:read', 'certificates:write', 'webhooks:manage', 'approvals:manage'], mode: 'test' });
      const routes: [string, string, object][] = [
        ['POST', '/api/cdp/authorize', { agent_id: 'agent_1', merchant_id: 'm_shop', amount_cents: 100, currency: 'USD', purpose: 'test' }],
        ['POST', '/api/cdp/webhooks/endpoints', { url: 'https://example.com/hook' }],
        ['POST', '/api/notary/create', { content: 'hello' }],
        ['POST', '/api/payments/notary-credits-checkout', { credits: 1 }],
        ['POST', '/v1/registry', { name: 'x' }],
        ['PUT', '/api/cdp/policies/pol_default', { per_transaction_cents: 100 }],
        ['POST', `/api/cdp/approvals/auth_${'0'.repeat(32)}/approve`, { note: 'ok' }],
      ];
      for (const [method, url, body] of routes) {
        const res = await inject({
          method: method as 'POST',
          url,
          headers: { authorization: `Bearer ${key}`, 'content-type': 'text/plain', 'idempotency-key': `ct-${url}` },
          payload: JSON.stringify(body),
        });
        expect([url, res.statusCode, res.json()]).toEqual([url, 415, { ok: false, error: 'unsupported_media_type', message: expect.any(String), retryable: false }]);
      }
      // Nothing was created.
      expect((await inject({ method: 'GET', url: '/api/cdp/webhooks/endpoints', headers: { authorization: `Bearer ${key}` } })).json().items).toEqual([]);
      expect((await inject({ method: 'GET', url: '/api/cdp/transactions', headers: { authorization: `Bearer ${key}` } })).json().items).toEqual([]);
    });

    it('names every invalid field in a validation error', async () => {
      const res = await inject({ method: 'POST', url: '/__probe/echo', payload: { count: 'three', extra: true } });
      expect(res.statusCode).toBe(400);
      const body = res.json();
      expect(body).toMatchObject({ ok: false, error: 'validation_failed', retryable: false });
      expect(body.details.map((d: { field: string }) => d.field).sort()).toEqual(['', 'count', 'name']);
      const missing = await inject({ method: 'POST', url: '/__probe/echo' });
      expect(missing.statusCode).toBe(400);
      expect(missing.json()).toMatchObject({ ok: false, error: 'validation_failed' });
    });

    it('accepts a valid body', async () => {
      const res = await inject({ method: 'POST', url: '/__probe/echo', payload: { name: 'a', count: 2 } });
      expect(res.statusCode).toBe(201);
      expect(res.json()).toEqual({ ok: true, body: { name: 'a', count: 2 } });
    });

    it('answers an unexpected failure 500 internal_error without internals or a stack', async () => {
      const res = await inject({ method: 'GET', url: '/__probe/boom' });
      expect(res.statusCode).toBe(500);
      expect(res.json()).toEqual({ ok: false, error: 'internal_error', message: 'Internal server error', retryable: false });
      expect(res.body).not.toMatch(/hunter2|secret|at .*\.ts|Error:/);
    });
  });

  describe('OpenAPI', () => {
    it('serves an OpenAPI 3 document at /openapi.json and browsable docs at /docs', async () => {
      const doc = await inject({ method: 'GET', url: '/openapi.json' });
      expect(doc.statusCode).toBe(200);
      const json = doc.json();
      expect(json.openapi).toMatch(/^3\./);
      expect(Object.keys(json.paths)).toEqual(expect.arrayContaining(['/healthz', '/readyz']));
      const docs = await inject({ method: 'GET', url: '/docs' });
      expect(docs.statusCode).toBe(200);
      expect(docs.headers['content-type']).toMatch(/text\/html/);
      expect(docs.body).toMatch(/swagger/i);
    });
  });
});

describe('readiness when a dependency is down', () => {
  it('answers /readyz 503 not_ready, naming Redis, when Redis is unreachable', async () => {
    // WORKERS=off: this is about readiness; the webhook delivery worker's own Redis handling is tested with the webhooks.
    const t = await startTestApp({ REDIS_URL: 'redis://127.0.0.1:1', WORKERS: 'off' });
    try {
      const res = await t.app.inject({ method: 'GET', url: '/readyz' });
      expect(res.statusCode).toBe(503);
      expect(res.json()).toMatchObject({ ok: false, error: 'not_ready', retryable: true, details: { checks: { store: 'up', redis: 'down' } } });
      expect(res.json().message).toMatch(/redis/);
      // Liveness does not depend on Redis.
      expect((await t.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    } finally {
      await t.close();
    }
  });
});

describe('graceful shutdown', () => {
  it('finishes in-flight requests, refuses new ones, reports draining, then closes the store', async () => {
    const t = await startTestApp({}, [ProbeModule]);
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.app.getHttpServer().address() as AddressInfo;
    const base = `http://127.0.0.1:${port}`;
    const store = t.app.get(EventStore);

    const inFlight = fetch(`${base}/__probe/slow`).then(async (r) => ({ status: r.status, body: await r.json() }));
    await new Promise((r) => setTimeout(r, 150));
    t.app.get(Lifecycle).startDraining();
    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(503);
    expect((await ready.json()).details.checks.draining).toBe(true);

    const closing = t.close();
    await new Promise((r) => setTimeout(r, 50));
    await expect(fetch(`${base}/healthz`)).rejects.toThrow();
    expect(await inFlight).toEqual({ status: 200, body: { ok: true, slow: true } });
    await closing;
    await expect(store.ping()).rejects.toThrow();
  });
});
