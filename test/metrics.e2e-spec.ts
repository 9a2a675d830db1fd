import { AccessService } from '@app/access';
import { createLogger } from '@app/http';
import { MetricsServer } from '@app/metrics';
import { isolatedEnv } from './support/isolated-env';
import { parsePrometheus, Sample, samplesOf, valueOf } from './support/prometheus-text';
import { startTestApp, TestApp } from './support/test-app';
import { eventually, WebhookReceiver } from './support/webhook-receiver';

const TOKEN = 'metrics-token-0123456789abcdef';
const postgres = Boolean(process.env.DATABASE_URL);

/**
 * GET /metrics after a payment lifecycle, over HTTP: the counts and labels an operator's
 * dashboards read (README, "Metrics"), and the token that guards them.
 */
describe('GET /metrics on the api port, behind METRICS_TOKEN (e2e)', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  let dispose: () => Promise<void>;

  beforeAll(async () => {
    const iso = await isolatedEnv();
    receiver = await new WebhookReceiver().start();
    t = await startTestApp({ ...iso.env, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_TIMEOUT_MS: '3000', METRICS_TOKEN: TOKEN, RATE_LIMIT_KEY_PER_MINUTE: '30', WEBHOOK_RETRY_SCHEDULE_MS: '200,200' });
    dispose = async () => {
      await t.close();
      await receiver.close();
      await iso.dispose();
    };
  }, 60_000);
  afterAll(() => dispose?.());

  const call = (method: 'GET' | 'POST' | 'PUT', url: string, key: string, payload?: unknown, headers: Record<string, string> = {}) =>
    t.app.inject({ method, url, ...(payload === undefined ? {} : { payload: payload as object }), headers: { authorization: `Bearer ${key}`, ...headers } });
  const scrape = async (): Promise<Sample[]> => {
    const res = await t.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    return parsePrometheus(res.body);
  };
  const request = (body: Record<string, unknown>) => ({
    currency: 'USD',
    merchant_id: 'm_hotel',
    purpose_tag: 'travel',
    delegated_authority: 'agent-7',
    expiration_iso: new Date(Date.now() + 3600_000).toISOString(),
    ...body,
  });

  it('refuses a scrape without the token, with another one or another scheme: 401 in the error envelope', async () => {
    for (const authorization of [undefined, `Bearer ${TOKEN}x`, `Bearer ${TOKEN.slice(0, -1)}`, `Basic ${Buffer.from(`x:${TOKEN}`).toString('base64')}`, TOKEN, 'Bearer ']) {
      const res = await t.app.inject({ method: 'GET', url: '/metrics', headers: authorization === undefined ? {} : { authorization } });
      expect(res.statusCode).toBe(401);
      expect(res.headers['www-authenticate']).toBe('Bearer realm="metrics"');
      expect(res.json()).toEqual({ ok: false, error: 'auth_required', message: expect.stringContaining('METRICS_TOKEN'), retryable: false });
    }
    // An API key is not the metrics token.
    const access = t.app.get(AccessService);
    const org = await access.createOrganization('scraper');
    const { key } = await access.createApiKey(org.org_id, { scopes: ['payments:read'], mode: 'test' });
    expect((await call('GET', '/metrics', key)).statusCode).toBe(401);
  });

  it('counts requests, decisions, reviews, deliveries, rate-limit refusals and idempotent replays of a lifecycle, by their labels', async () => {
    const before = await scrape();
    const access = t.app.get(AccessService);
    const org = await access.createOrganization('metered');
    const { key } = await access.createApiKey(org.org_id, { scopes: ['payments:write', 'payments:read', 'receipts:read', 'approvals:manage', 'webhooks:manage'], mode: 'test' });
    const route = receiver.route('metered');
    expect((await call('POST', '/api/cdp/webhooks/endpoints', key, { url: route.url })).statusCode).toBe(201);
    expect((await call('PUT', '/api/cdp/policies/default', key, { limits: { USD: { per_transaction_cents: 50_000, review_above_cents: 20_000 } } })).statusCode).toBe(200);

    // Escalated, replayed once with its key, then the key reused for another body.
    const escalate = request({ amount_cents: 30_000 });
    const first = await call('POST', '/api/cdp/authorize', key, escalate, { 'idempotency-key': 'metrics-lifecycle-1' });
    expect(first.json()).toMatchObject({ decision: 'needs_review', reason_code: 'REVIEW_REQUIRED' });
    const replay = await call('POST', '/api/cdp/authorize', key, escalate, { 'idempotency-key': 'metrics-lifecycle-1' });
    expect([replay.statusCode, replay.headers['idempotent-replayed']]).toEqual([200, 'true']);
    expect(replay.json().transaction_id).toBe(first.json().transaction_id);
    expect((await call('POST', '/api/cdp/authorize', key, request({ amount_cents: 31_000 }), { 'idempotency-key': 'metrics-lifecycle-1' })).statusCode).toBe(422);
    // Authorized, and blocked by the policy.
    expect((await call('POST', '/api/cdp/authorize', key, request({ amount_cents: 5_000 }))).json()).toMatchObject({ decision: 'authorized', reason_code: null });
    expect((await call('POST', '/api/cdp/authorize', key, request({ amount_cents: 90_000 }))).json()).toMatchObject({ decision: 'blocked', reason_code: 'AMOUNT_EXCEEDS_LIMIT' });

    const { transaction_id, authorization_id } = first.json();
    expect((await call('POST', `/api/cdp/approvals/${authorization_id}/approve`, key, { note: 'ok' })).statusCode).toBe(200);
    expect((await call('POST', `/api/cdp/transactions/${transaction_id}/execute`, key)).statusCode).toBe(200);
    expect((await call('GET', `/api/cdp/receipts/${transaction_id}`, key)).statusCode).toBe(200);

    // Another key of the organization runs past its window (30 a minute here): one 429.
    const { key: busy } = await access.createApiKey(org.org_id, { scopes: ['payments:read'], mode: 'test' });
    const statuses: number[] = [];
    for (let i = 0; i < 31; i++) statuses.push((await call('GET', '/api/cdp/policies/default', busy)).statusCode);
    expect(statuses.filter((s) => s === 429)).toHaveLength(1);

    // Every lifecycle event of the three transactions reaches the receiver, and is counted once delivered.
    const received = await eventually(() => (receiver.on(route.path).length >= 10 ? receiver.on(route.path) : null), 30_000, 'the lifecycle deliveries');
    const after = await eventually(
      async () => {
        const s = await scrape();
        return valueOf(s, 'sigil_webhook_deliveries_total', { outcome: 'delivered' }) - valueOf(before, 'sigil_webhook_deliveries_total', { outcome: 'delivered' }) >= received.length ? s : null;
      },
      30_000,
      'deliveries counted',
    );
    const delta = (name: string, labels: Record<string, string> = {}) => valueOf(after, name, labels) - valueOf(before, name, labels);

    // HTTP: by route template, method and status; never a raw id.
    const http = 'sigil_http_request_duration_seconds_count';
    expect(delta(http, { route: '/api/cdp/authorize', method: 'POST', status: '200' })).toBe(4); // three decisions and the replay
    expect(delta(http, { route: '/api/cdp/authorize', method: 'POST', status: '422' })).toBe(1);
    expect(delta(http, { route: '/api/cdp/approvals/:authorization_id/approve', method: 'POST', status: '200' })).toBe(1);
    expect(delta(http, { route: '/api/cdp/transactions/:id/execute', method: 'POST', status: '200' })).toBe(1);
    expect(delta(http, { route: '/api/cdp/receipts/:transaction_id', method: 'GET', status: '200' })).toBe(1);
    expect(delta(http, { route: '/api/cdp/policies/:policy_id', method: 'GET', status: '200' })).toBe(30);
    expect(delta(http, { route: '/api/cdp/policies/:policy_id', method: 'GET', status: '429' })).toBe(1);
    const routes = new Set(samplesOf(after, http).map((s) => s.labels.route));
    for (const r of routes) expect(r).not.toMatch(/txn_|auth_|org_/);
    const durationSum = samplesOf(after, 'sigil_http_request_duration_seconds_sum', { route: '/api/cdp/authorize', status: '200' })[0].value;
    expect(durationSum).toBeGreaterThan(0);

    // Decisions: by decision and reason code; replays are not decisions.
    expect(delta('sigil_authorization_decisions_total', { decision: 'needs_review', reason_code: 'REVIEW_REQUIRED' })).toBe(1);
    expect(delta('sigil_authorization_decisions_total', { decision: 'authorized', reason_code: 'none' })).toBe(1);
    expect(delta('sigil_authorization_decisions_total', { decision: 'blocked', reason_code: 'AMOUNT_EXCEEDS_LIMIT' })).toBe(1);
    expect(delta('sigil_authorization_decision_duration_seconds_count')).toBe(3);
    expect(delta('sigil_authorization_decision_duration_seconds_count', { decision: 'needs_review' })).toBe(1);
    // The escalated one was approved by a person.
    expect(delta('sigil_authorization_reviews_total', { outcome: 'approved' })).toBe(1);
    expect(delta('sigil_authorization_reviews_total', { outcome: 'rejected' })).toBe(0);

    // Webhooks: delivered at the first attempt, each with its latency from the event.
    expect(delta('sigil_webhook_deliveries_total', { outcome: 'delivered', attempt: '1' })).toBe(received.length);
    expect(delta('sigil_webhook_deliveries_total', { outcome: 'retry' })).toBe(0);
    expect(delta('sigil_webhook_delivery_latency_seconds_count')).toBe(received.length);
    expect(valueOf(after, 'sigil_webhook_endpoints_disabled')).toBe(0);
    expect(samplesOf(after, 'sigil_webhook_queue_depth').map((s) => s.labels.state).sort()).toEqual(['due', 'scheduled']);
    expect(samplesOf(after, 'sigil_webhook_oldest_pending_age_seconds')).toHaveLength(1);

    // Limits and idempotency.
    expect(delta('sigil_rate_limit_rejections_total', { lane: 'authenticated', surface: 'key_window' })).toBe(1);
    expect(delta('sigil_idempotency_replays_total', { route: '/api/cdp/authorize' })).toBe(1);
    expect(delta('sigil_idempotency_conflicts_total', { route: '/api/cdp/authorize', reason: 'key_reused' })).toBe(1);

    // The store: appends timed (new transactions group-committed), checkpointed readers' lag, the pool.
    expect(delta('sigil_event_store_append_duration_seconds_count', { method: 'append' })).toBeGreaterThan(0);
    expect(delta('sigil_event_store_append_duration_seconds_count', { method: 'append_many' })).toBeGreaterThan(0);
    const lag = samplesOf(after, 'sigil_projection_lag_events');
    expect(lag.map((s) => s.labels.projection)).toEqual(expect.arrayContaining(['webhook-fan-out']));
    for (const s of lag) expect(s.value).toBeGreaterThanOrEqual(0);
    expect(samplesOf(after, 'sigil_db_pool_connections')).toHaveLength(postgres ? 1 : 0);
    if (postgres) expect(valueOf(after, 'sigil_db_pool_waiting')).toBeGreaterThanOrEqual(0);
    // And the process's own (prom-client's defaults).
    expect(samplesOf(after, 'process_cpu_user_seconds_total')).toHaveLength(1);
  }, 90_000);

  it('counts retried, failed and abandoned deliveries by attempt, and the endpoint a 410 disabled', async () => {
    const before = await scrape();
    const access = t.app.get(AccessService);
    const org = await access.createOrganization('receivers');
    const { key } = await access.createApiKey(org.org_id, { scopes: ['payments:write', 'webhooks:manage'], mode: 'test' });
    // One receiver answers 503 to the first attempt of each delivery, the other 410 Gone to everything.
    const seen = new Set<string>();
    const flaky = receiver.route('flaky', (_n, req) => {
      const id = String(req.headers['webhook-id']);
      if (seen.has(id)) return { status: 200 };
      seen.add(id);
      return { status: 503 };
    });
    const gone = receiver.route('gone', () => ({ status: 410 }));
    for (const url of [flaky.url, gone.url]) expect((await call('POST', '/api/cdp/webhooks/endpoints', key, { url })).statusCode).toBe(201);
    expect((await call('PUT', '/api/cdp/policies/default', key, { limits: { USD: { per_transaction_cents: 50_000 } } })).statusCode).toBe(200);
    expect((await call('POST', '/api/cdp/authorize', key, request({ amount_cents: 1_000 }))).json()).toMatchObject({ decision: 'authorized' });

    // Two events (requested, approved): each fails once on the flaky endpoint, then arrives at attempt 2.
    const delta = (s: Sample[], name: string, labels: Record<string, string> = {}) => valueOf(s, name, labels) - valueOf(before, name, labels);
    const after = await eventually(
      async () => {
        const s = await scrape();
        const goneDone = delta(s, 'sigil_webhook_deliveries_total', { outcome: 'failed' }) + delta(s, 'sigil_webhook_deliveries_total', { outcome: 'abandoned' });
        // The attempts are counted as they are made; the store records them (and disables the endpoint) just after.
        const recorded = valueOf(s, 'sigil_webhook_endpoints_disabled') === 1 && valueOf(s, 'sigil_webhook_queue_depth') === 0;
        return delta(s, 'sigil_webhook_deliveries_total', { outcome: 'delivered', attempt: '2' }) === 2 && goneDone === 2 && recorded ? s : null;
      },
      30_000,
      'the retried and the refused deliveries',
    );
    expect(receiver.on(flaky.path)).toHaveLength(4);
    expect(delta(after, 'sigil_webhook_deliveries_total', { outcome: 'retry', attempt: '1' })).toBe(2);
    expect(delta(after, 'sigil_webhook_deliveries_total', { outcome: 'delivered', attempt: '1' })).toBe(0);
    expect(delta(after, 'sigil_webhook_deliveries_total', { outcome: 'failed', attempt: '1' })).toBeGreaterThanOrEqual(1); // the first 410 disables the endpoint
    expect(delta(after, 'sigil_webhook_delivery_latency_seconds_count')).toBe(2);
    expect(valueOf(after, 'sigil_webhook_endpoints_disabled')).toBe(1);
    expect(valueOf(after, 'sigil_webhook_queue_depth')).toBe(0);
  }, 60_000);

  it('counts what no route matched under route="unmatched", so unknown paths never become labels', async () => {
    const before = await scrape();
    expect((await t.app.inject({ method: 'GET', url: '/api/cdp/no-such-thing/txn_0123' })).statusCode).toBe(404);
    expect((await t.app.inject({ method: 'GET', url: '/api/%E0%A4%A' })).statusCode).toBe(400); // refused before routing
    expect((await t.app.inject({ method: 'HEAD', url: '/healthz' })).statusCode).toBe(200);
    const after = await scrape();
    const delta = (labels: Record<string, string>) => valueOf(after, 'sigil_http_request_duration_seconds_count', labels) - valueOf(before, 'sigil_http_request_duration_seconds_count', labels);
    expect(delta({ route: 'unmatched', method: 'GET', status: '404' })).toBe(1);
    expect(delta({ route: 'unmatched', method: 'GET', status: '400' })).toBe(1);
    expect(delta({ route: '/healthz', method: 'HEAD', status: '200' })).toBe(1);
    expect(samplesOf(after, 'sigil_http_request_duration_seconds_count').filter((s) => /no-such-thing|%/.test(s.labels.route))).toEqual([]);
    for (const s of samplesOf(after, 'sigil_http_request_duration_seconds_sum')) expect(Number.isFinite(s.value)).toBe(true);
  });

  it('shows the fan-out caught up once the deliveries are scheduled', async () => {
    const lag = await eventually(
      async () => {
        const s = samplesOf(await scrape(), 'sigil_projection_lag_events', { projection: 'webhook-fan-out' });
        return s.length === 1 && s[0].value === 0 ? s : null;
      },
      30_000,
      'the fan-out at the head of $all',
    );
    expect(lag[0].value).toBe(0);
  }, 40_000);
});

describe('GET /metrics with METRICS_PORT: a listener of its own (e2e)', () => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    t = await startTestApp({ METRICS_PORT: '0', METRICS_TOKEN: TOKEN, HOST: '127.0.0.1' });
    base = `http://127.0.0.1:${t.app.get(MetricsServer).port}`;
  }, 60_000);
  afterAll(() => t?.close());

  it('serves the registry there, with the token, and not on the api port', async () => {
    await t.app.inject({ method: 'GET', url: '/healthz' });
    const res = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.status).toBe(200);
    const samples = parsePrometheus(await res.text());
    expect(valueOf(samples, 'sigil_http_request_duration_seconds_count', { route: '/healthz', method: 'GET', status: '200' })).toBe(1);

    const wrong = await fetch(`${base}/metrics`, { headers: { authorization: 'Bearer not-the-metrics-token' } });
    expect(wrong.status).toBe(401);
    expect(await wrong.json()).toMatchObject({ ok: false, error: 'auth_required' });
    expect((await fetch(`${base}/metrics`)).status).toBe(401);
    const elsewhere = await fetch(`${base}/healthz`);
    expect(elsewhere.status).toBe(404);
    expect(await elsewhere.json()).toMatchObject({ ok: false, error: 'not_found' });
    expect((await fetch(`${base}/metrics`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(404);

    const onApi = await t.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } });
    expect(onApi.statusCode).toBe(404);
    expect(onApi.json()).toMatchObject({ ok: false, error: 'not_found' });
  });

  it('stops listening when the app closes', async () => {
    const other = await startTestApp({ METRICS_PORT: '0', HOST: '127.0.0.1' });
    const port = other.app.get(MetricsServer).port;
    // Without METRICS_TOKEN the separate port asks for none.
    expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).toBe(200);
    await other.close();
    await expect(fetch(`http://127.0.0.1:${port}/metrics`)).rejects.toThrow();
  }, 60_000);
});

describe('METRICS_PORT without METRICS_TOKEN on a HOST that is not loopback (e2e)', () => {
  it('logs a warning at start that GET /metrics is open; a token or a loopback HOST does not', async () => {
    const warned = async (env: Record<string, string>) => {
      const lines: string[] = [];
      const logger = createLogger('warn', 'sigil', { write: (line: string) => void lines.push(line) });
      const app = await startTestApp(env, [], { logger });
      await app.close();
      return lines.map((l) => JSON.parse(l) as { msg: string; level: number }).filter((l) => /GET \/metrics on METRICS_PORT/.test(l.msg));
    };
    expect(await warned({ METRICS_PORT: '0', HOST: '0.0.0.0' })).toEqual([expect.objectContaining({ level: 40, msg: expect.stringContaining('set METRICS_TOKEN') })]);
    expect(await warned({ METRICS_PORT: '0', HOST: '0.0.0.0', METRICS_TOKEN: TOKEN })).toEqual([]);
    expect(await warned({ METRICS_PORT: '0', HOST: '127.0.0.1' })).toEqual([]);
  }, 120_000);
});

describe('GET /metrics with neither METRICS_TOKEN nor METRICS_PORT (e2e)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  }, 60_000);
  afterAll(() => t?.close());

  it('is not served: 404 in the envelope, token or not, and no listener is opened', async () => {
    for (const headers of [{}, { authorization: `Bearer ${TOKEN}` }]) {
      const res = await t.app.inject({ method: 'GET', url: '/metrics', headers });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toMatchObject({ ok: false, error: 'not_found' });
    }
    expect(t.app.get(MetricsServer).port).toBeNull();
  });
});
