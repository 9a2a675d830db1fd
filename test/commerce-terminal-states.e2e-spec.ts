import { AccessService } from '@app/access';
import { ExpirySweep } from '@app/commerce';
import { verifyTimeline } from '@app/sdk';
import type { TestApp } from './support/test-app';
import { startWebhookApp } from './support/webhook-app';
import { eventually, WebhookReceiver } from './support/webhook-receiver';

/**
 * Every outcome ends somewhere: a payment the provider declined ends `declined`, announced by a
 * final `execution.failed`; an authorization whose window closed unexecuted ends `expired`,
 * releasing the spend it held. Both are terminal, listed by status, shown in the timeline and
 * delivered by webhook.
 */
describe('terminal states of a transaction (e2e)', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  let close: () => Promise<void>;

  beforeAll(async () => {
    ({ t, receiver, close } = await startWebhookApp());
  }, 60_000);
  afterAll(() => close?.());

  const call = (method: 'GET' | 'POST' | 'PUT', url: string, key: string, payload?: unknown) =>
    t.app.inject({ method, url, ...(payload === undefined ? {} : { payload: payload as object }), headers: { authorization: `Bearer ${key}` } });

  /** An organization with a key, a policy (daily cap 100.00) and a webhook endpoint on its own receiver route. */
  const integrator = async (name: string) => {
    const access = t.app.get(AccessService);
    const org = await access.createOrganization(name);
    const { key } = await access.createApiKey(org.org_id, { scopes: ['payments:write', 'payments:read', 'receipts:read', 'approvals:manage', 'webhooks:manage'], mode: 'test' });
    const route = receiver.route(name);
    expect((await call('POST', '/api/cdp/webhooks/endpoints', key, { url: route.url })).statusCode).toBe(201);
    const policy = { limits: { USD: { per_transaction_cents: 50_000 } }, spend_caps: [{ window: 'daily', currency: 'USD', amount_cents: 10_000 }] };
    expect((await call('PUT', '/api/cdp/policies/default', key, policy)).statusCode).toBe(200);
    return { key, route };
  };
  const authorize = async (key: string, over: Record<string, unknown>) =>
    (
      await call('POST', '/api/cdp/authorize', key, {
        amount_cents: 1_000,
        currency: 'USD',
        merchant_id: 'm_books',
        purpose_tag: 'software',
        expiration_iso: new Date(Date.now() + 3600_000).toISOString(),
        ...over,
      })
    ).json();

  it('a declined settlement ends the transaction declined: final execution.failed, listed, in the timeline, by webhook; never retried', async () => {
    const { key, route } = await integrator('declines');
    const d = await authorize(key, { amount_cents: 1_002 });
    expect(d.decision).toBe('authorized');
    const executed = await call('POST', `/api/cdp/transactions/${d.transaction_id}/execute`, key);
    expect(executed.statusCode).toBe(402);
    expect(executed.json().error).toBe('payment_declined');

    expect((await call('GET', `/api/cdp/transactions/${d.transaction_id}`, key)).json()).toMatchObject({ status: 'declined' });
    const listed = (await call('GET', '/api/cdp/transactions?status=declined', key)).json();
    expect(listed.items.map((i: { transaction_id: string }) => i.transaction_id)).toEqual([d.transaction_id]);

    const timeline = (await call('GET', `/api/cdp/transactions/${d.transaction_id}/events`, key)).json();
    const [last, anchor] = timeline.events.slice(-2);
    expect(last).toMatchObject({ event_type: 'execution.failed', status: 'declined', metadata: { final: true, retryable: false } });
    // The decline ends the transaction: the anchor follows it and names its hash.
    expect(anchor).toMatchObject({ event_type: 'timeline.anchored', status: 'declined', metadata: { anchor: { payload: { last_event_hash: last.hash, terminal_status: 'declined' } } } });
    expect(timeline).toMatchObject({ chain_valid: true, anchor: { valid: true, state: 'anchored' } });
    const keys = (await t.app.inject({ method: 'GET', url: '/.well-known/signing-keys.json' })).json();
    expect(verifyTimeline(timeline, { keys, expectedStatus: 'declined' })).toMatchObject({ valid: true, anchor: { state: 'anchored', terminal_status: 'declined' } });

    const again = await call('POST', `/api/cdp/transactions/${d.transaction_id}/execute`, key);
    expect(again.json()).toMatchObject({ error: 'payment_declined' });
    expect(again.statusCode).toBe(409); // as documented: the decline itself was the 402
    expect((await call('GET', `/api/cdp/transactions/${d.transaction_id}/events`, key)).json().events).toHaveLength(timeline.events.length);

    const failed = await eventually(() => receiver.on(route.path).map((r) => JSON.parse(r.body)).find((b) => b.event_type === 'execution.failed'), 30_000, 'the execution.failed delivery');
    expect(failed).toMatchObject({ transaction_id: d.transaction_id, status: 'declined', metadata: { final: true } });
  });

  it('an authorized payment whose window closed unexecuted ends expired and releases its spend; it can no longer execute', async () => {
    const { key, route } = await integrator('lapses');
    const expiresAt = new Date(Date.now() + 1500).toISOString();
    const d = await authorize(key, { amount_cents: 8_000, expiration_iso: expiresAt });
    expect(d.decision).toBe('authorized');
    // The cap (100.00) holds 80.00 now: 30.00 more does not fit.
    expect(await authorize(key, { amount_cents: 3_000 })).toMatchObject({ decision: 'blocked', reason_code: 'SPEND_CAP_EXCEEDED' });

    await new Promise((r) => setTimeout(r, Date.parse(expiresAt) - Date.now() + 50));
    await t.app.get(ExpirySweep).tick();

    expect((await call('GET', `/api/cdp/transactions/${d.transaction_id}`, key)).json()).toMatchObject({ status: 'expired' });
    const listed = (await call('GET', '/api/cdp/transactions?status=expired', key)).json();
    expect(listed.items.map((i: { transaction_id: string }) => i.transaction_id)).toEqual([d.transaction_id]);
    const timeline = (await call('GET', `/api/cdp/transactions/${d.transaction_id}/events`, key)).json();
    expect(timeline.events.map((e: { event_type: string }) => e.event_type)).toEqual(['authorization.requested', 'authorization.approved', 'authorization.rejected', 'timeline.anchored']);
    expect(timeline).toMatchObject({ chain_valid: true, anchor: { state: 'anchored', terminal_status: 'expired' } });
    expect(timeline.events[2]).toMatchObject({ status: 'expired', actor: { type: 'system', id: 'expiry-sweep' }, metadata: { reason_code: 'EXPIRED', rejected_by: 'expiry' } });

    // The 80.00 it held is free again.
    expect(await authorize(key, { amount_cents: 9_000 })).toMatchObject({ decision: 'authorized' });
    const late = await call('POST', `/api/cdp/transactions/${d.transaction_id}/execute`, key);
    expect(late.statusCode).toBe(409);
    expect(late.json().error).toBe('transaction_not_authorized');

    const rejected = await eventually(() => receiver.on(route.path).map((r) => JSON.parse(r.body)).find((b) => b.event_type === 'authorization.rejected' && b.transaction_id === d.transaction_id), 30_000, 'the expiry delivery');
    expect(rejected).toMatchObject({ transaction_id: d.transaction_id, status: 'expired', actor: { type: 'system', id: 'expiry-sweep' } });
  });
});
