import { createPublicKey, verify as verifyEd25519 } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { AccessService } from '@app/access';
import type { Scope } from '@app/access';
import { SqlEventStore } from '@app/event-store';
import { createWebhookDeduplicator, verifyWebhook } from '@app/sdk';
import { WEBHOOK_EVENT_TYPES } from '@app/webhooks';
import { commerceLifecycle } from './bench/commerce-events';
import { isolatedEnv } from './support/isolated-env';
import { startTestApp, TestApp } from './support/test-app';
import { eventually, Received, WebhookReceiver } from './support/webhook-receiver';

/**
 * Webhooks end to end: a real receiver on 127.0.0.1, commerce-shaped events appended to the
 * store, the fan-out projection and the delivery worker of the real app (store scheduler when
 * embedded, BullMQ in the PostgreSQL + Redis pass), with a fast retry schedule.
 */
describe('webhooks (e2e)', () => {
  let t: TestApp;
  let iso: Awaited<ReturnType<typeof isolatedEnv>>;
  let receiver: WebhookReceiver;
  let access: AccessService;
  let store: SqlEventStore;
  let keysDocument: { keys: { key_id: string; public_key: string; status: string }[] };
  let signingKeys: typeof keysDocument.keys;

  beforeAll(async () => {
    iso = await isolatedEnv();
    receiver = await new WebhookReceiver().start();
    t = await startTestApp({
      ...iso.env,
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_RETRY_SCHEDULE_MS: '100,200,400',
      // Generous: the receiver shares this (busy) process's event loop; a stall must not look like a timeout.
      WEBHOOK_TIMEOUT_MS: '3000',
      RATE_LIMITS: 'off',
    });
    access = t.app.get(AccessService);
    store = t.app.get(SqlEventStore);
    keysDocument = (await t.app.inject({ method: 'GET', url: '/.well-known/signing-keys.json' })).json();
    signingKeys = keysDocument.keys;
  }, 60_000);

  afterAll(async () => {
    await t?.close();
    await receiver?.close();
    await iso?.dispose();
  });

  const orgWithKey = async (scopes: Scope[] = ['webhooks:manage']) => {
    const org = await access.createOrganization(`webhooks-${Math.random().toString(36).slice(2, 8)}`);
    const { key } = await access.createApiKey(org.org_id, { scopes, mode: 'test' });
    return { orgId: org.org_id, key };
  };
  const call = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, key?: string, payload?: unknown) =>
    t.app.inject({ method, url, payload: payload as object, headers: key ? { authorization: `Bearer ${key}` } : {} });
  const createEndpoint = async (key: string, body: Record<string, unknown>) => {
    const res = await call('POST', '/api/cdp/webhooks/endpoints', key, body);
    expect(res.statusCode).toBe(201);
    return res.json() as { id: string; secret: string; url: string; event_types: string[]; enabled: boolean };
  };
  const appendLifecycle = async (orgId: string, path?: 'full' | 'approved' | 'rejected') => {
    const l = commerceLifecycle(orgId, path);
    const result = await store.append(l.stream, l.events, { expectedRevision: 'no_stream' });
    return { ...l, recorded: result.events };
  };
  const delivery = async (key: string, id: string) => (await call('GET', `/api/cdp/webhooks/deliveries/${id}`, key)).json();
  const deliveriesOf = async (key: string, query: string) => (await call('GET', `/api/cdp/webhooks/deliveries?${query}`, key)).json();

  const verifyV1a = (r: Received): boolean => {
    const sig = String(r.headers['webhook-signature']).split(' ').find((s) => s.startsWith('v1a,'));
    if (!sig) return false;
    const content = Buffer.from(`${r.headers['webhook-id']}.${r.headers['webhook-timestamp']}.${r.body}`);
    return signingKeys.some(
      (k) => k.status !== 'revoked' && verifyEd25519(null, content, createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: k.public_key }, format: 'jwk' }), Buffer.from(sig.slice(4), 'base64')),
    );
  };

  it('delivers every lifecycle event to each subscribed endpoint, signed v1 and v1a, in the contract shape', async () => {
    const { orgId, key } = await orgWithKey();
    const all = receiver.route('all');
    const receipts = receiver.route('receipts');
    const off = receiver.route('off');
    const epAll = await createEndpoint(key, { url: all.url, description: 'everything' });
    expect(epAll).toMatchObject({ url: all.url, event_types: [...WEBHOOK_EVENT_TYPES], enabled: true, description: 'everything' });
    expect(epAll.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const epReceipts = await createEndpoint(key, { url: receipts.url, event_types: ['receipt.issued', 'receipt.issued'] });
    expect(epReceipts.event_types).toEqual(['receipt.issued']);
    await createEndpoint(key, { url: off.url, enabled: false });
    const other = await orgWithKey();
    const otherRoute = receiver.route('other-org');
    await createEndpoint(other.key, { url: otherRoute.url });

    const full = await appendLifecycle(orgId, 'full');
    const approved = await appendLifecycle(orgId, 'approved');
    const rejected = await appendLifecycle(orgId, 'rejected');
    const recorded = [...full.recorded, ...approved.recorded, ...rejected.recorded];
    expect(new Set(recorded.map((e) => e.type))).toEqual(new Set(WEBHOOK_EVENT_TYPES));

    // At least once each (a receiver stalled past the timeout may see an event twice, same webhook-id).
    const ids = new Set(recorded.map((e) => e.event_id));
    const got = await eventually(() => new Set(receiver.on(all.path).map((r) => r.headers['webhook-id'])).size >= ids.size && receiver.on(all.path), 20_000, 'all deliveries');
    await eventually(() => receiver.on(receipts.path).length >= 1, 10_000, 'the receipt delivery');
    expect(new Set(got.map((r) => r.headers['webhook-id']))).toEqual(ids);

    const wh = new Webhook(epAll.secret);
    for (const r of got) {
      expect(r.headers['content-type']).toBe('application/json');
      expect(Number(r.headers['webhook-timestamp'])).toBeGreaterThan(Date.now() / 1000 - 60);
      expect(String(r.headers['webhook-signature']).split(' ').map((s) => s.split(',')[0])).toEqual(['v1', 'v1a']);
      expect(wh.verify(r.body, r.headers as Record<string, string>)).toEqual(JSON.parse(r.body)); // standardwebhooks, v1
      expect(verifyV1a(r)).toBe(true); // Ed25519 against /.well-known/signing-keys.json
      // Our SDK's receiver kit: v1 with the secret, v1a with the keys document.
      const headers = r.headers as Record<string, string>;
      expect(verifyWebhook(r.body, headers, epAll.secret)).toEqual({ valid: true, id: headers['webhook-id'], timestamp: Number(headers['webhook-timestamp']) });
      expect(verifyWebhook(r.body, headers, keysDocument as Parameters<typeof verifyWebhook>[2])).toMatchObject({ valid: true });
      expect(verifyWebhook(r.body.replace('"sequence"', '"sequenc3"'), headers, keysDocument as Parameters<typeof verifyWebhook>[2])).toMatchObject({ valid: false, reason: 'no_matching_signature' });
    }
    // Deduplicating by webhook-id leaves one of each event.
    const dedupe = createWebhookDeduplicator();
    expect(got.filter((r) => !dedupe.seen(String(r.headers['webhook-id'])))).toHaveLength(recorded.length);

    // The body: the contract's fields; sequence orders a transaction's events.
    const bodies = [...new Map(got.map((r) => [r.headers['webhook-id'], JSON.parse(r.body)])).values()];
    const ofFull = bodies.filter((b) => b.transaction_id === full.transactionId).sort((a, b) => a.sequence - b.sequence);
    expect(ofFull.map((b) => b.sequence)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(ofFull.map((b) => b.event_type)).toEqual(full.events.map((e) => e.type));
    const escalated = ofFull[1];
    expect(escalated).toEqual({
      id: full.recorded[1].event_id,
      event_type: 'authorization.escalated',
      transaction_id: full.transactionId,
      timestamp: full.recorded[1].recorded_at,
      actor: { type: 'api_key', id: String(full.events[1].metadata!.actor).slice('api_key:'.length) },
      status: 'needs_review',
      sequence: 2,
      metadata: expect.objectContaining({ decision: 'needs_review', reason_code: 'AMOUNT_ABOVE_REVIEW', authorization_id: expect.stringMatching(/^auth_/) }),
    });
    expect(escalated.metadata).not.toHaveProperty('organization_id');
    expect(ofFull[6].actor).toEqual({ type: 'system', id: 'settlement' });

    // Subscriptions: the receipts endpoint got only the receipt; disabled and other-org endpoints nothing.
    const receiptBodies = receiver.on(receipts.path).map((r) => JSON.parse(r.body));
    expect(receiptBodies.map((b) => b.event_type)).toEqual(['receipt.issued']);
    expect(new Webhook(epReceipts.secret).verify(receiver.on(receipts.path)[0].body, receiver.on(receipts.path)[0].headers as Record<string, string>)).toBeTruthy();
    expect(() => new Webhook(epReceipts.secret).verify(got[0].body, got[0].headers as Record<string, string>)).toThrow();
    expect(receiver.on(off.path)).toHaveLength(0);
    expect(receiver.on(otherRoute.path)).toHaveLength(0);

    // History: every delivery delivered after one attempt; filters and cursor pages.
    await eventually(async () => (await deliveriesOf(key, `endpoint_id=${epAll.id}&status=delivered&limit=200`)).items.length === recorded.length, 5000, 'history');
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { items: { id: string; status: string; attempts: number; endpoint_id: string }[]; next_cursor: string | null } = await deliveriesOf(
        key,
        `endpoint_id=${epAll.id}&limit=5${cursor ? `&cursor=${cursor}` : ''}`,
      );
      expect(page.items.length).toBeLessThanOrEqual(5);
      for (const d of page.items) expect(d).toMatchObject({ status: 'delivered', endpoint_id: epAll.id });
      seen.push(...page.items.map((d) => d.id));
      cursor = page.next_cursor;
    } while (cursor);
    expect(new Set(seen).size).toBe(recorded.length);
    // The receipt went to two endpoints; the wait above covered only epAll's copy.
    await eventually(async () => (await deliveriesOf(key, 'event_type=receipt.issued&status=delivered')).items.length === 2, 5000, 'receipts');
    const receiptsOnly = await deliveriesOf(key, 'event_type=receipt.issued');
    expect(receiptsOnly.items).toHaveLength(2);
    const one = await delivery(key, receiptsOnly.items[0].id);
    expect(one).toMatchObject({ status: 'delivered', webhook_id: full.recorded[7].event_id, event_type: 'receipt.issued', transaction_id: full.transactionId });
    expect(one.payload).toMatchObject({ id: full.recorded[7].event_id, sequence: 8, status: 'receipt_issued' });
    expect(one.attempt_history.at(-1)).toEqual(expect.objectContaining({ series: 1, status_code: 204, outcome: 'delivered', error: null, response_body: '' }));
    // Endpoints of other organizations do not see this history.
    expect((await deliveriesOf(other.key, `endpoint_id=${epAll.id}`)).items).toEqual([]);
  });

  it('retries 5xx, timeouts and network errors on the schedule with the same webhook-id, and records each attempt', async () => {
    const { orgId, key } = await orgWithKey();
    const flaky = receiver.route('flaky', (n) => (n <= 2 ? { status: 503, body: 'busy '.repeat(10_000) } : { status: 200, body: 'ok' }));
    const ep = await createEndpoint(key, { url: flaky.url, event_types: ['authorization.approved'] });
    const { recorded } = await appendLifecycle(orgId, 'approved');
    const got = await eventually(() => receiver.on(flaky.path).length >= 3 && receiver.on(flaky.path), 10_000, 'three attempts');
    expect(new Set(got.map((r) => r.headers['webhook-id']))).toEqual(new Set([recorded[1].event_id]));
    expect(got[1].at - got[0].at).toBeGreaterThanOrEqual(90);
    expect(got[2].at - got[1].at).toBeGreaterThanOrEqual(190);
    for (const r of got) expect(new Webhook(ep.secret).verify(r.body, r.headers as Record<string, string>)).toBeTruthy();

    const [d] = (await eventually(async () => {
      const page = await deliveriesOf(key, `endpoint_id=${ep.id}&status=delivered`);
      return page.items.length === 1 && page.items;
    })) as { id: string }[];
    const detail = await delivery(key, d.id);
    expect(detail).toMatchObject({ status: 'delivered', attempts: 3, last_status_code: 200, next_attempt_at: null });
    expect(detail.attempt_history.map((a: { status_code: number; outcome: string }) => [a.status_code, a.outcome])).toEqual([
      [503, 'retry'],
      [503, 'retry'],
      [200, 'delivered'],
    ]);
    expect(detail.attempt_history[0].response_body).toHaveLength(20 * 1024); // at most 20 KB kept
    expect(detail.attempt_history[2].response_body).toBe('ok');
    const events = await store.readStream(`webhook-delivery-${d.id}`);
    expect(events.map((e) => e.type)).toEqual(['webhook.delivery_scheduled', 'webhook.delivery_attempted', 'webhook.delivery_attempted', 'webhook.delivery_attempted']);
    expect(events[1].data).toMatchObject({ attempt: 1, status_code: 503, outcome: 'retry', latency_ms: expect.any(Number) });

    // No answer within the timeout is retried; refused connections too, until the schedule ends.
    const hang = receiver.route('hang', (n) => (n === 1 ? 'hang' : { status: 200 }));
    const epHang = await createEndpoint(key, { url: hang.url, event_types: ['authorization.rejected'] });
    const epDown = await createEndpoint(key, { url: 'http://127.0.0.1:9/down', event_types: ['authorization.rejected'] });
    await appendLifecycle(orgId, 'rejected');
    const [timedOut, refused] = await Promise.all(
      [
        [epHang.id, 'delivered'],
        [epDown.id, 'failed'],
      ].map(([id, status]) =>
        eventually(async () => (await deliveriesOf(key, `endpoint_id=${id}&status=${status}`)).items[0], 20_000, `the ${status} delivery`),
      ),
    );
    const th = (await delivery(key, timedOut.id)).attempt_history;
    expect(th.map((a: { outcome: string }) => a.outcome)).toEqual(['retry', 'delivered']);
    expect(th[0]).toMatchObject({ status_code: null, error: 'no response within 3000 ms', latency_ms: expect.any(Number) });
    expect(th[0].latency_ms).toBeGreaterThanOrEqual(2900);
    expect(receiver.on(hang.path)).toHaveLength(2);
    const rh = (await delivery(key, refused.id)).attempt_history;
    expect(rh.map((a: { outcome: string }) => a.outcome)).toEqual(['retry', 'retry', 'retry', 'failed']);
    expect(rh[0]).toMatchObject({ status_code: null, error: expect.stringMatching(/ECONNREFUSED/) });
  });

  it('records an attempt whose receiver answered a body holding U+0000 (it was never recorded, and sent again and again)', async () => {
    const { key } = await orgWithKey();
    const nul = receiver.route('nul-body', () => ({ status: 200, body: 'ok\u0000bye' }));
    const ep = await createEndpoint(key, { url: nul.url });
    const { delivery_id } = (await call('POST', `/api/cdp/webhooks/endpoints/${ep.id}/test`, key)).json();
    const done = await eventually(async () => {
      const d = await delivery(key, delivery_id);
      return d.status === 'delivered' && d;
    }, 5000, 'the delivery recorded');
    expect(done.attempt_history).toMatchObject([{ status_code: 200, outcome: 'delivered', response_body: 'ok\ufffdbye' }]);
    expect(receiver.on(nul.path)).toHaveLength(1);
  });

  it('honours Retry-After, fails other 4xx and redirects at once, and disables the endpoint on 410', async () => {
    const { orgId, key } = await orgWithKey();
    const limited = receiver.route('limited', (n) => (n === 1 ? { status: 429, headers: { 'retry-after': '1' } } : { status: 200 }));
    const bad = receiver.route('bad', () => ({ status: 400, body: '{"error":"nope"}' }));
    const moved = receiver.route('moved', () => ({ status: 301, headers: { location: limited.url } }));
    const gone = receiver.route('gone', () => ({ status: 410 }));
    const [, epBad, epMoved, epGone] = [
      await createEndpoint(key, { url: limited.url, event_types: ['authorization.approved'] }),
      await createEndpoint(key, { url: bad.url, event_types: ['authorization.approved'] }),
      await createEndpoint(key, { url: moved.url, event_types: ['authorization.approved'] }),
      await createEndpoint(key, { url: gone.url, event_types: ['authorization.approved'] }),
    ];
    await appendLifecycle(orgId, 'approved');

    const got = await eventually(() => receiver.on(limited.path).length >= 2 && receiver.on(limited.path), 10_000, 'the retry after Retry-After');
    expect(got[1].at - got[0].at).toBeGreaterThanOrEqual(950); // not the schedule's 100 ms

    for (const [ep, code] of [
      [epBad, 400],
      [epMoved, 301],
    ] as const) {
      const failed = await eventually(async () => (await deliveriesOf(key, `endpoint_id=${ep.id}&status=failed`)).items[0], 10_000, 'failure');
      expect(failed).toMatchObject({ attempts: 1, last_status_code: code });
    }
    expect(receiver.on(bad.path)).toHaveLength(1);
    expect(receiver.on(moved.path)).toHaveLength(1);
    expect(receiver.on(limited.path)).toHaveLength(2); // the redirect was not followed

    // 410: the endpoint is disabled, with an event, and gets nothing more.
    const disabled = await eventually(async () => {
      const ep = (await call('GET', `/api/cdp/webhooks/endpoints/${epGone.id}`, key)).json();
      return ep.enabled === false && ep;
    }, 10_000, 'the endpoint disabled');
    expect(disabled).toMatchObject({ disabled_reason: 'gone', disabled_at: expect.any(String) });
    const stream = await store.readStream(`webhook-endpoint-${epGone.id}`);
    expect(stream.at(-1)).toMatchObject({ type: 'webhook.endpoint_disabled', data: expect.objectContaining({ reason: 'gone', delivery_id: expect.stringMatching(/^dlv_/) }) });
    const goneBefore = receiver.on(gone.path).length;
    expect(goneBefore).toBe(1);
    await appendLifecycle(orgId, 'approved');
    await eventually(() => receiver.on(limited.path).length >= 3, 10_000, 'the next event elsewhere');
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.on(gone.path)).toHaveLength(goneBefore);
    expect((await call('POST', `/api/cdp/webhooks/endpoints/${epGone.id}/test`, key)).json()).toMatchObject({ error: 'webhook_endpoint_disabled' });
    // Enabling it again clears the reason.
    const enabled = (await call('PATCH', `/api/cdp/webhooks/endpoints/${epGone.id}`, key, { enabled: true })).json();
    expect(enabled).toMatchObject({ enabled: true, disabled_reason: null, disabled_at: null });
  });

  it('redelivers a delivery and recovers an endpoint\'s failed deliveries with the original webhook-ids', async () => {
    const { orgId, key } = await orgWithKey();
    let healthy = false;
    const route = receiver.route('recover', () => ({ status: healthy ? 200 : 500 }));
    const ep = await createEndpoint(key, { url: route.url });
    const since = new Date(Date.now() - 1000).toISOString();
    const { recorded } = await appendLifecycle(orgId, 'approved');
    const failed = await eventually(async () => {
      const page = await deliveriesOf(key, `endpoint_id=${ep.id}&status=failed`);
      return page.items.length === 2 && page.items;
    }, 20_000, 'two failed deliveries');
    expect(receiver.on(route.path)).toHaveLength(8);
    healthy = true;

    // Redeliver one: a new series, same webhook-id.
    const res = await call('POST', `/api/cdp/webhooks/deliveries/${failed[0].id}/redeliver`, key);
    expect(res.statusCode).toBe(202);
    expect(res.json()).toMatchObject({ id: failed[0].id, webhook_id: failed[0].webhook_id, status: 'pending', series: 2 });
    await eventually(async () => (await delivery(key, failed[0].id)).status === 'delivered', 10_000, 'the redelivery');
    expect(receiver.on(route.path).at(-1)!.headers['webhook-id']).toBe(failed[0].webhook_id);
    const detail = await delivery(key, failed[0].id);
    expect(detail.attempt_history.at(-1)).toMatchObject({ attempt: 5, series: 2, status_code: 200, outcome: 'delivered' });
    // Redelivering a delivered one is allowed again; a pending one is not.
    expect((await call('POST', `/api/cdp/webhooks/deliveries/${failed[0].id}/redeliver`, key)).statusCode).toBe(202);
    const again = await call('POST', `/api/cdp/webhooks/deliveries/${failed[0].id}/redeliver`, key);
    // Still pending (409), unless the previous series already finished.
    expect([202, 409]).toContain(again.statusCode);
    if (again.statusCode === 409) expect(again.json()).toMatchObject({ error: 'webhook_delivery_pending' });

    // Recover: every failed delivery since then (the other one), same webhook-id.
    const before = receiver.on(route.path).length;
    const rec = await call('POST', `/api/cdp/webhooks/endpoints/${ep.id}/recover?since=${encodeURIComponent(since)}`, key);
    expect(rec.statusCode).toBe(202);
    expect(rec.json()).toMatchObject({ endpoint_id: ep.id, recovered: 1 });
    await eventually(async () => (await delivery(key, failed[1].id)).status === 'delivered', 10_000, 'the recovered delivery');
    const after = receiver.on(route.path).slice(before).map((r) => r.headers['webhook-id']);
    expect(after).toContain(failed[1].webhook_id);
    expect(new Set([failed[0].webhook_id, failed[1].webhook_id])).toEqual(new Set(recorded.map((e) => e.event_id)));
    // Nothing failed remains to recover.
    const none = await call('POST', `/api/cdp/webhooks/endpoints/${ep.id}/recover?since=${encodeURIComponent(since)}`, key);
    expect(none.json()).toMatchObject({ recovered: 0 });
  });

  it('signs with the old and the new secret after a rotation, and sends a test ping through the delivery path', async () => {
    const { key } = await orgWithKey();
    const route = receiver.route('rotate');
    const ep = await createEndpoint(key, { url: route.url });
    const rotated = await call('POST', `/api/cdp/webhooks/endpoints/${ep.id}/rotate-secret`, key);
    expect(rotated.statusCode).toBe(200);
    const { secret, previous_secret_expires_at } = rotated.json();
    expect(secret).toMatch(/^whsec_/);
    expect(secret).not.toBe(ep.secret);
    expect(Date.parse(previous_secret_expires_at) - Date.now()).toBeGreaterThan(23.9 * 3600 * 1000);
    expect((await call('GET', `/api/cdp/webhooks/endpoints/${ep.id}`, key)).json()).not.toHaveProperty('secret');

    const ping = await call('POST', `/api/cdp/webhooks/endpoints/${ep.id}/test`, key);
    expect(ping.statusCode).toBe(202);
    const { delivery_id, webhook_id } = ping.json();
    const [r] = await eventually(() => receiver.on(route.path).length === 1 && receiver.on(route.path), 10_000, 'the ping');
    expect(r.headers['webhook-id']).toBe(webhook_id);
    expect(String(r.headers['webhook-signature']).split(' ').map((s) => s.split(',')[0])).toEqual(['v1', 'v1', 'v1a']);
    const body = new Webhook(secret).verify(r.body, r.headers as Record<string, string>);
    expect(new Webhook(ep.secret).verify(r.body, r.headers as Record<string, string>)).toEqual(body);
    expect(verifyV1a(r)).toBe(true);
    for (const k of [secret, ep.secret]) expect(verifyWebhook(r.body, r.headers as Record<string, string>, k)).toMatchObject({ valid: true, id: webhook_id });
    expect(body).toMatchObject({ id: webhook_id, event_type: 'webhook.test', transaction_id: null, actor: { type: 'api_key' } });
    await eventually(async () => (await delivery(key, delivery_id)).status === 'delivered', 5000, 'the ping delivered');

    // The secrets are stored sealed and appear in no event.
    const events = await store.readStream(`webhook-endpoint-${ep.id}`);
    expect(events.map((e) => e.type)).toEqual(['webhook.endpoint_created', 'webhook.endpoint_secret_rotated']);
    const raw = JSON.stringify(events);
    for (const s of [ep.secret, secret]) expect(raw).not.toContain(s.slice(6));
  });

  it('manages endpoints: list, update, delete; other organizations get 404', async () => {
    const { key } = await orgWithKey();
    const other = await orgWithKey();
    const ep = await createEndpoint(key, { url: receiver.route('crud').url, event_types: ['receipt.issued'] });
    const patched = await call('PATCH', `/api/cdp/webhooks/endpoints/${ep.id}`, key, { event_types: ['execution.failed', 'execution.succeeded'], description: 'settlement' });
    expect(patched.statusCode).toBe(200);
    expect(patched.json()).toMatchObject({ id: ep.id, event_types: ['execution.succeeded', 'execution.failed'], description: 'settlement', enabled: true });
    expect((await call('GET', '/api/cdp/webhooks/endpoints', key)).json().items.map((e: { id: string }) => e.id)).toEqual([ep.id]);
    expect((await call('GET', '/api/cdp/webhooks/endpoints', other.key)).json().items).toEqual([]);

    for (const [method, suffix, payload] of [
      ['GET', '', undefined],
      ['PATCH', '', { enabled: false }],
      ['DELETE', '', undefined],
      ['POST', '/rotate-secret', undefined],
      ['POST', '/test', undefined],
      ['POST', `/recover?since=${encodeURIComponent(new Date().toISOString())}`, undefined],
    ] as const) {
      const res = await call(method, `/api/cdp/webhooks/endpoints/${ep.id}${suffix}`, other.key, payload);
      expect([method, suffix, res.statusCode, res.json().error]).toEqual([method, suffix, 404, 'not_found']);
    }
    const d = (await call('POST', `/api/cdp/webhooks/endpoints/${ep.id}/test`, key)).json().delivery_id;
    expect((await call('GET', `/api/cdp/webhooks/deliveries/${d}`, other.key)).statusCode).toBe(404);
    expect((await call('POST', `/api/cdp/webhooks/deliveries/${d}/redeliver`, other.key)).statusCode).toBe(404);
    expect((await call('GET', `/api/cdp/webhooks/deliveries/dlv_${'0'.repeat(32)}`, key)).statusCode).toBe(404);

    const del = await call('DELETE', `/api/cdp/webhooks/endpoints/${ep.id}`, key);
    expect(del.statusCode).toBe(204);
    expect((await call('GET', `/api/cdp/webhooks/endpoints/${ep.id}`, key)).statusCode).toBe(404);
    expect((await call('GET', '/api/cdp/webhooks/endpoints', key)).json().items).toEqual([]);
    expect((await call('DELETE', `/api/cdp/webhooks/endpoints/${ep.id}`, key)).statusCode).toBe(404);
  });

  it('answers bad input with 4xx JSON errors', async () => {
    const { key } = await orgWithKey();
    const noScope = await orgWithKey(['payments:read']);
    const ok = receiver.route('bad-input').url;
    const ep = await createEndpoint(key, { url: ok });
    const cases: [string, string, unknown, number, string][] = [
      ['POST', '/api/cdp/webhooks/endpoints', {}, 400, 'validation_failed'],
      ['POST', '/api/cdp/webhooks/endpoints', undefined, 400, 'validation_failed'],
      ['POST', '/api/cdp/webhooks/endpoints', { url: 42 }, 400, 'validation_failed'],
      ['POST', '/api/cdp/webhooks/endpoints', { url: ok, event_types: 'receipt.issued' }, 400, 'validation_failed'],
      ['POST', '/api/cdp/webhooks/endpoints', { url: ok, event_types: ['payment.made'] }, 400, 'validation_failed'],
      ['POST', '/api/cdp/webhooks/endpoints', { url: ok, event_types: [] }, 400, 'validation_failed'],
      ['POST', '/api/cdp/webhooks/endpoints', { url: ok, enabled: 'yes' }, 400, 'validation_failed'],
      ['POST', '/api/cdp/webhooks/endpoints', { url: ok, secret: 'whsec_x' }, 400, 'validation_failed'],
      ['POST', '/api/cdp/webhooks/endpoints', { url: ok, description: 'x'.repeat(501) }, 400, 'validation_failed'],
      ['POST', '/api/cdp/webhooks/endpoints', { url: 'not a url' }, 400, 'validation_failed'],
      ['POST', '/api/cdp/webhooks/endpoints', { url: 'ftp://example.com/hook' }, 400, 'validation_failed'],
      ['POST', '/api/cdp/webhooks/endpoints', { url: 'javascript:alert(1)' }, 400, 'validation_failed'],
      ['POST', '/api/cdp/webhooks/endpoints', { url: 'https://user:pw@example.com/hook' }, 400, 'validation_failed'],
      ['POST', '/api/cdp/webhooks/endpoints', { url: `https://example.com/${'a'.repeat(2100)}` }, 400, 'validation_failed'],
      ['PATCH', `/api/cdp/webhooks/endpoints/${ep.id}`, {}, 400, 'validation_failed'],
      ['PATCH', `/api/cdp/webhooks/endpoints/${ep.id}`, { url: 'gopher://x' }, 400, 'validation_failed'],
      ['GET', '/api/cdp/webhooks/endpoints/ep_nope', undefined, 400, 'validation_failed'],
      ['GET', `/api/cdp/webhooks/endpoints/${ep.id.toUpperCase()}`, undefined, 400, 'validation_failed'],
      ['DELETE', "/api/cdp/webhooks/endpoints/1'%20OR%201=1", undefined, 400, 'validation_failed'],
      ['GET', '/api/cdp/webhooks/deliveries/123', undefined, 400, 'validation_failed'],
      ['POST', '/api/cdp/webhooks/deliveries/dlv_x/redeliver', undefined, 400, 'validation_failed'],
      ['GET', '/api/cdp/webhooks/deliveries?status=lost', undefined, 400, 'validation_failed'],
      ['GET', '/api/cdp/webhooks/deliveries?limit=0', undefined, 400, 'validation_failed'],
      ['GET', '/api/cdp/webhooks/deliveries?cursor=abc', undefined, 400, 'validation_failed'],
      // Forged cursors whose date JavaScript reads but PostgreSQL refuses (`["1","x"]`, `["Tuesday 5","x"]`): were 500.
      ['GET', `/api/cdp/webhooks/deliveries?cursor=${Buffer.from('["1","x"]').toString('base64url')}`, undefined, 400, 'validation_failed'],
      ['GET', `/api/cdp/webhooks/deliveries?cursor=${Buffer.from('["Tuesday 5","x"]').toString('base64url')}`, undefined, 400, 'validation_failed'],
      ['GET', '/api/cdp/webhooks/deliveries?endpoint_id=x', undefined, 400, 'validation_failed'],
      ['GET', '/api/cdp/webhooks/deliveries?unknown=1', undefined, 400, 'validation_failed'],
      ['POST', `/api/cdp/webhooks/endpoints/${ep.id}/recover`, undefined, 400, 'validation_failed'],
      ['POST', `/api/cdp/webhooks/endpoints/${ep.id}/recover?since=yesterday`, undefined, 400, 'validation_failed'],
      // ISO-8601, but year 0 (in UTC) is no PostgreSQL timestamp: was 500.
      ['POST', `/api/cdp/webhooks/endpoints/${ep.id}/recover?since=0000-01-01T00:00:00Z`, undefined, 400, 'validation_failed'],
      ['POST', `/api/cdp/webhooks/endpoints/${ep.id}/recover?since=${encodeURIComponent('0001-01-01T00:30:00+01:00')}`, undefined, 400, 'validation_failed'],
    ];
    for (const [method, url, payload, status, error] of cases) {
      const res = await call(method as 'GET', url, key, payload);
      expect([method, url, res.statusCode, res.json().error]).toEqual([method, url, status, error]);
    }
    const noKey = await call('GET', '/api/cdp/webhooks/endpoints');
    expect([noKey.statusCode, noKey.json().error]).toEqual([401, 'auth_required']);
    for (const [method, url] of [
      ['GET', '/api/cdp/webhooks/endpoints'],
      ['POST', '/api/cdp/webhooks/endpoints'],
      ['GET', '/api/cdp/webhooks/deliveries'],
      ['POST', `/api/cdp/webhooks/endpoints/${ep.id}/rotate-secret`],
    ]) {
      const res = await call(method as 'GET', url, noScope.key, method === 'POST' ? { url: ok } : undefined);
      expect([url, res.statusCode, res.json().error]).toEqual([url, 403, 'insufficient_scope']);
    }
  });
});

/** The default configuration: private targets refused at registration and at send time. */
describe('webhooks with private targets refused (default)', () => {
  let t: TestApp;
  let iso: Awaited<ReturnType<typeof isolatedEnv>>;
  let receiver: WebhookReceiver;
  let key: string;
  let orgId: string;

  beforeAll(async () => {
    iso = await isolatedEnv();
    receiver = await new WebhookReceiver().start();
    // 0.00001 days = 864 ms: an endpoint failing that long is disabled.
    t = await startTestApp({ ...iso.env, WEBHOOK_DISABLE_AFTER_DAYS: '0.00001', RATE_LIMITS: 'off' });
    const access = t.app.get(AccessService);
    orgId = (await access.createOrganization('private-targets')).org_id;
    key = (await access.createApiKey(orgId, { scopes: ['webhooks:manage'], mode: 'test' })).key;
  }, 60_000);

  afterAll(async () => {
    await t?.close();
    await receiver?.close();
    await iso?.dispose();
  });

  const call = (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: unknown) =>
    t.app.inject({ method, url, payload: payload as object, headers: { authorization: `Bearer ${key}` } });

  it.each([
    `http://127.0.0.1:{port}/hook`,
    `http://localhost:{port}/hook`, // a name that resolves to loopback
    'http://[::1]/hook',
    'http://[::ffff:127.0.0.1]/hook',
    'http://0.0.0.0/hook',
    'http://10.0.0.7/hook',
    'http://172.20.1.1/hook',
    'http://192.168.1.1/hook',
    'http://100.64.0.1/hook',
    'https://169.254.169.254/latest/meta-data',
    'http://[fd00::1]/hook',
    'http://[fe80::1]/hook',
    'http://224.0.0.1/hook',
    'http://2130706433/hook', // 127.0.0.1 spelled as one number
  ])('refuses %s at registration with webhook_target_not_allowed', async (pattern) => {
    const res = await call('POST', '/api/cdp/webhooks/endpoints', { url: pattern.replace('{port}', String(receiver.port)) });
    expect([res.statusCode, res.json().error]).toEqual([400, 'webhook_target_not_allowed']);
  });

  it('refuses a host that does not resolve, and a private target in a PATCH', async () => {
    const res = await call('POST', '/api/cdp/webhooks/endpoints', { url: 'https://nothing.invalid/hook' });
    expect([res.statusCode, res.json().error]).toEqual([400, 'webhook_target_unresolvable']);
    const ep = (await call('POST', '/api/cdp/webhooks/endpoints', { url: 'https://93.184.215.14/hook' })).json();
    expect(ep.id).toMatch(/^ep_/);
    const patched = await call('PATCH', `/api/cdp/webhooks/endpoints/${ep.id}`, { url: `http://localhost:${receiver.port}/x` });
    expect([patched.statusCode, patched.json().error]).toEqual([400, 'webhook_target_not_allowed']);
  });

  it('checks again at send time, after DNS resolution, and disables an endpoint that only fails for long enough', async () => {
    const route = receiver.route('rebound');
    const ep = (await call('POST', '/api/cdp/webhooks/endpoints', { url: 'https://93.184.215.14/hook' })).json();
    // The target's name now resolves to loopback (as a DNS change would make it): recorded as
    // an endpoint event directly, since the API refuses such a URL.
    const { EndpointRepository } = await import('@app/webhooks');
    const endpoints = t.app.get(EndpointRepository);
    await endpoints.save((await endpoints.load(ep.id))!, [
      { type: 'webhook.endpoint_updated', data: { endpoint_id: ep.id, organization_id: orgId, url: `http://localhost:${receiver.port}${route.path}` } },
    ]);

    const first = (await call('POST', `/api/cdp/webhooks/endpoints/${ep.id}/test`)).json();
    const failed = await eventually(async () => {
      const d = (await call('GET', `/api/cdp/webhooks/deliveries/${first.delivery_id}`)).json();
      return d.status === 'failed' && d;
    }, 10_000, 'the refused delivery');
    expect(failed).toMatchObject({ attempts: 1, last_status_code: null, last_error: expect.stringMatching(/localhost resolves to (127\.0\.0\.1|::1), which is not a public address/) });
    expect(receiver.on(route.path)).toHaveLength(0);

    // Only failures for longer than WEBHOOK_DISABLE_AFTER_DAYS: disabled, with an event.
    await new Promise((r) => setTimeout(r, 1000));
    await call('POST', `/api/cdp/webhooks/endpoints/${ep.id}/test`);
    const disabled = await eventually(async () => {
      const e = (await call('GET', `/api/cdp/webhooks/endpoints/${ep.id}`)).json();
      return e.enabled === false && e;
    }, 10_000, 'the endpoint disabled');
    expect(disabled.disabled_reason).toBe('failing');
    const events = await t.app.get(SqlEventStore).readStream(`webhook-endpoint-${ep.id}`);
    expect(events.at(-1)).toMatchObject({ type: 'webhook.endpoint_disabled', data: { reason: 'failing', failing_since: expect.any(String) } });
    expect(receiver.on(route.path)).toHaveLength(0);
  });
});
