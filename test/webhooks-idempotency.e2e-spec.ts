import { randomBytes } from 'node:crypto';
import { AccessService } from '@app/access';
import { SqlDatabase } from '@app/event-store';
import { isolatedEnv } from './support/isolated-env';
import { lapseIdempotencyClaim } from './support/lapsed-claim';
import { startTestApp, TestApp } from './support/test-app';
import { eventually, WebhookReceiver } from './support/webhook-receiver';

/**
 * The Idempotency-Key rule on the webhook routes that create something (an endpoint, a test
 * delivery, a redelivery series, a recovery), over HTTP: a replay answers the first response
 * with Idempotent-Replayed: true and creates nothing; another body, path or query is 422; keys
 * are the organization's; without a key every request runs, as before.
 */
describe('webhooks: Idempotency-Key (e2e)', () => {
  let t: TestApp;
  let iso: Awaited<ReturnType<typeof isolatedEnv>>;
  let receiver: WebhookReceiver;
  let access: AccessService;

  beforeAll(async () => {
    iso = await isolatedEnv();
    receiver = await new WebhookReceiver().start();
    t = await startTestApp({ ...iso.env, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_RETRY_SCHEDULE_MS: '50,50', WEBHOOK_TIMEOUT_MS: '3000', RATE_LIMITS: 'off' });
    access = t.app.get(AccessService);
  }, 60_000);

  afterAll(async () => {
    await t?.close();
    await receiver?.close();
    await iso?.dispose();
  });

  const orgWithKey = async () => {
    const org = await access.createOrganization(`webhooks-idem-${randomBytes(3).toString('hex')}`);
    return (await access.createApiKey(org.org_id, { scopes: ['webhooks:manage'], mode: 'test' })).key;
  };
  const newKey = () => `idem-${randomBytes(8).toString('hex')}`;
  const call = (method: 'GET' | 'POST', url: string, key: string, opts: { payload?: object; idem?: string } = {}) =>
    t.app.inject({
      method,
      url,
      payload: opts.payload,
      headers: { authorization: `Bearer ${key}`, ...(opts.idem === undefined ? {} : { 'idempotency-key': opts.idem }) },
    });
  const endpointsOf = async (key: string) => (await call('GET', '/api/cdp/webhooks/endpoints', key)).json().items as { id: string }[];
  const deliveriesOf = async (key: string, endpointId: string) =>
    (await call('GET', `/api/cdp/webhooks/deliveries?endpoint_id=${endpointId}`, key)).json().items as { id: string; status: string; series: number }[];
  const createEndpoint = async (key: string, url: string) => {
    const res = await call('POST', '/api/cdp/webhooks/endpoints', key, { payload: { url } });
    expect(res.statusCode).toBe(201);
    return res.json() as { id: string; secret: string };
  };
  const expectReused = (res: Awaited<ReturnType<typeof call>>) => {
    expect(res.statusCode).toBe(422);
    expect(res.json()).toMatchObject({ ok: false, error: 'idempotency_key_reused', retryable: false });
  };

  it('POST /endpoints: a retry after a process died between creating the endpoint and storing the answer gets that endpoint and its secret, not a second endpoint', async () => {
    const key = await orgWithKey();
    const idem = newKey();
    const body = { url: receiver.route('idem-crash').url, description: 'crash' };
    const first = await call('POST', '/api/cdp/webhooks/endpoints', key, { payload: body, idem });
    expect(first.statusCode).toBe(201);
    // What the dead process leaves: the key claimed, no answer, its lease run out.
    expect(await lapseIdempotencyClaim(t.app, idem)).toBe(1);
    const retried = await call('POST', '/api/cdp/webhooks/endpoints', key, { payload: body, idem });
    expect(retried.statusCode).toBe(201);
    expect(retried.json()).toEqual(first.json());
    expect((await endpointsOf(key)).map((e) => e.id)).toEqual([first.json().id]);
    // Without a key, the same body is a new endpoint every time.
    const plain = await call('POST', '/api/cdp/webhooks/endpoints', key, { payload: body });
    expect(plain.json().id).not.toBe(first.json().id);
  });

  it('POST /endpoints: a replay is the first endpoint with its secret, stored sealed; another body 422; another organization independent', async () => {
    const key = await orgWithKey();
    const idem = newKey();
    const body = { url: receiver.route('idem-create').url, description: 'once' };
    const first = await call('POST', '/api/cdp/webhooks/endpoints', key, { payload: body, idem });
    expect(first.statusCode).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect(first.json().secret).toMatch(/^whsec_/);
    const again = await call('POST', '/api/cdp/webhooks/endpoints', key, { payload: { description: 'once', url: body.url }, idem });
    expect(again.statusCode).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual(first.json());
    expect((await endpointsOf(key)).map((e) => e.id)).toEqual([first.json().id]);

    // The stored response holds no secret in plain text: it is sealed under the key-encryption key.
    const [row] = await t.app.get(SqlDatabase).query<{ body: string }>('SELECT response_body::text AS body FROM idempotency_keys WHERE key = $1', [idem]);
    expect(row.body).not.toContain(first.json().secret.slice('whsec_'.length));
    expect(row.body).not.toContain(first.json().id);
    expect(JSON.parse(row.body)).toEqual({ sealed: expect.stringMatching(/^v1\./) });

    expectReused(await call('POST', '/api/cdp/webhooks/endpoints', key, { payload: { ...body, description: 'twice' }, idem }));
    expect(await endpointsOf(key)).toHaveLength(1);

    // Another organization's same key is its own.
    const other = await orgWithKey();
    const theirs = await call('POST', '/api/cdp/webhooks/endpoints', other, { payload: body, idem });
    expect(theirs.statusCode).toBe(201);
    expect(theirs.headers['idempotent-replayed']).toBeUndefined();
    expect(theirs.json().id).not.toBe(first.json().id);
    expect(theirs.json().secret).not.toBe(first.json().secret);
    expect((await endpointsOf(other)).map((e) => e.id)).toEqual([theirs.json().id]);

    // The header stays optional: without it each request creates an endpoint, as before.
    expect((await call('POST', '/api/cdp/webhooks/endpoints', key, { payload: body })).statusCode).toBe(201);
    expect(await endpointsOf(key)).toHaveLength(2);
  });

  it('POST /endpoints/{id}/test: a replay is the first ping, one delivery; another endpoint or body 422; another organization independent', async () => {
    const key = await orgWithKey();
    const pings = receiver.route('idem-test');
    const ep = await createEndpoint(key, pings.url);
    const ep2 = await createEndpoint(key, receiver.route('idem-test-2').url);
    const idem = newKey();
    const first = await call('POST', `/api/cdp/webhooks/endpoints/${ep.id}/test`, key, { idem });
    expect(first.statusCode).toBe(202);
    const again = await call('POST', `/api/cdp/webhooks/endpoints/${ep.id}/test`, key, { idem });
    expect(again.statusCode).toBe(202);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual(first.json());
    expect((await deliveriesOf(key, ep.id)).map((d) => d.id)).toEqual([first.json().delivery_id]);

    expectReused(await call('POST', `/api/cdp/webhooks/endpoints/${ep2.id}/test`, key, { idem }));
    expectReused(await call('POST', `/api/cdp/webhooks/endpoints/${ep.id}/test`, key, { idem, payload: { note: 'another body' } }));
    expect(await deliveriesOf(key, ep.id)).toHaveLength(1);
    expect(await deliveriesOf(key, ep2.id)).toHaveLength(0);
    await eventually(() => receiver.on(pings.path).length >= 1, 10_000, 'the ping');
    // At least once (a stalled receiver may see it twice), and only the one ping.
    expect(new Set(receiver.on(pings.path).map((r) => r.headers['webhook-id']))).toEqual(new Set([first.json().webhook_id]));

    const other = await orgWithKey();
    const theirEp = await createEndpoint(other, receiver.route('idem-test-other').url);
    const theirs = await call('POST', `/api/cdp/webhooks/endpoints/${theirEp.id}/test`, other, { idem });
    expect(theirs.statusCode).toBe(202);
    expect(theirs.headers['idempotent-replayed']).toBeUndefined();
    expect(theirs.json().delivery_id).not.toBe(first.json().delivery_id);

    // Without a key each ping is a new delivery.
    expect((await call('POST', `/api/cdp/webhooks/endpoints/${ep.id}/test`, key)).statusCode).toBe(202);
    expect(await deliveriesOf(key, ep.id)).toHaveLength(2);
  });

  it('POST /deliveries/{id}/redeliver: a replay is the first series, started once; another delivery 422; another organization independent', async () => {
    const key = await orgWithKey();
    const ep = await createEndpoint(key, receiver.route('idem-redeliver').url);
    const ping = (await call('POST', `/api/cdp/webhooks/endpoints/${ep.id}/test`, key)).json();
    const ping2 = (await call('POST', `/api/cdp/webhooks/endpoints/${ep.id}/test`, key)).json();
    await eventually(async () => (await deliveriesOf(key, ep.id)).every((d) => d.status === 'delivered'), 10_000, 'both pings delivered');
    const idem = newKey();
    const first = await call('POST', `/api/cdp/webhooks/deliveries/${ping.delivery_id}/redeliver`, key, { idem });
    expect(first.statusCode).toBe(202);
    expect(first.json()).toMatchObject({ id: ping.delivery_id, series: 2 });
    const again = await call('POST', `/api/cdp/webhooks/deliveries/${ping.delivery_id}/redeliver`, key, { idem });
    expect(again.statusCode).toBe(202);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual(first.json());
    await eventually(async () => (await call('GET', `/api/cdp/webhooks/deliveries/${ping.delivery_id}`, key)).json().status === 'delivered', 10_000, 'the redelivery');
    // Once more after it finished: still the replay, not a third series.
    const later = await call('POST', `/api/cdp/webhooks/deliveries/${ping.delivery_id}/redeliver`, key, { idem });
    expect(later.headers['idempotent-replayed']).toBe('true');
    expect(later.json()).toEqual(first.json());
    expect((await call('GET', `/api/cdp/webhooks/deliveries/${ping.delivery_id}`, key)).json().series).toBe(2);

    expectReused(await call('POST', `/api/cdp/webhooks/deliveries/${ping2.delivery_id}/redeliver`, key, { idem }));
    expect((await call('GET', `/api/cdp/webhooks/deliveries/${ping2.delivery_id}`, key)).json().series).toBe(1);

    const other = await orgWithKey();
    const theirEp = await createEndpoint(other, receiver.route('idem-redeliver-other').url);
    const theirPing = (await call('POST', `/api/cdp/webhooks/endpoints/${theirEp.id}/test`, other)).json();
    await eventually(async () => (await call('GET', `/api/cdp/webhooks/deliveries/${theirPing.delivery_id}`, other)).json().status === 'delivered', 10_000, 'their ping');
    const theirs = await call('POST', `/api/cdp/webhooks/deliveries/${theirPing.delivery_id}/redeliver`, other, { idem });
    expect(theirs.statusCode).toBe(202);
    expect(theirs.headers['idempotent-replayed']).toBeUndefined();
    expect(theirs.json()).toMatchObject({ id: theirPing.delivery_id, series: 2 });
  });

  it('POST /endpoints/{id}/recover: a replay is the first recovery, run once; another since 422; another organization independent', async () => {
    let healthy = false;
    const route = receiver.route('idem-recover', () => ({ status: healthy ? 200 : 500 }));
    const key = await orgWithKey();
    const ep = await createEndpoint(key, route.url);
    const since = new Date(Date.now() - 60_000).toISOString();
    const ping = (await call('POST', `/api/cdp/webhooks/endpoints/${ep.id}/test`, key)).json();
    await eventually(async () => (await deliveriesOf(key, ep.id))[0]?.status === 'failed', 10_000, 'the ping failed');
    healthy = true;
    const url = `/api/cdp/webhooks/endpoints/${ep.id}/recover?since=${encodeURIComponent(since)}`;
    const idem = newKey();
    const first = await call('POST', url, key, { idem });
    expect(first.statusCode).toBe(202);
    expect(first.json()).toMatchObject({ endpoint_id: ep.id, recovered: 1 });
    const again = await call('POST', url, key, { idem });
    expect(again.statusCode).toBe(202);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual(first.json());
    await eventually(async () => (await call('GET', `/api/cdp/webhooks/deliveries/${ping.delivery_id}`, key)).json().status === 'delivered', 10_000, 'the recovered ping');
    expect((await call('GET', `/api/cdp/webhooks/deliveries/${ping.delivery_id}`, key)).json().series).toBe(2);

    // The query is part of the request: another `since` with the same key is another request.
    const otherSince = `/api/cdp/webhooks/endpoints/${ep.id}/recover?since=${encodeURIComponent(new Date(Date.now() - 120_000).toISOString())}`;
    expectReused(await call('POST', otherSince, key, { idem }));
    expectReused(await call('POST', url, key, { idem, payload: { all: true } }));

    const other = await orgWithKey();
    const theirEp = await createEndpoint(other, receiver.route('idem-recover-other').url);
    const theirs = await call('POST', `/api/cdp/webhooks/endpoints/${theirEp.id}/recover?since=${encodeURIComponent(since)}`, other, { idem });
    expect(theirs.statusCode).toBe(202);
    expect(theirs.headers['idempotent-replayed']).toBeUndefined();
    expect(theirs.json()).toMatchObject({ endpoint_id: theirEp.id, recovered: 0 });
  });
});
