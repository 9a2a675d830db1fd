import { Webhook } from 'standardwebhooks';
import { AccessService } from '@app/access';
import { verifyReceipt, verifyTimeline, verifyWebhook } from '@app/sdk';
import type { TestApp } from './support/test-app';
import { startWebhookApp } from './support/webhook-app';
import { eventually, WebhookReceiver } from './support/webhook-receiver';

/**
 * The whole path, as an integrator sees it: an agent's payment is escalated, approved by a
 * reviewer, executed and receipted through the HTTP API, and every lifecycle step reaches the
 * integrator's webhook endpoint, signed, in order, verifiable with off-the-shelf tools and the SDK.
 */
describe('commerce lifecycle delivered by webhook (e2e)', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  let close: () => Promise<void>;

  beforeAll(async () => {
    ({ t, receiver, close } = await startWebhookApp());
  }, 60_000);
  afterAll(() => close?.());

  const call = (method: 'GET' | 'POST' | 'PUT', url: string, key: string, payload?: unknown) =>
    t.app.inject({ method, url, ...(payload === undefined ? {} : { payload: payload as object }), headers: { authorization: `Bearer ${key}` } });

  it('delivers requested, escalated, human_approved, execution and receipt events, signed and ordered, for a real transaction', async () => {
    const access = t.app.get(AccessService);
    const org = await access.createOrganization('integrator');
    const { key, key_id } = await access.createApiKey(org.org_id, { scopes: ['payments:write', 'payments:read', 'receipts:read', 'approvals:manage', 'webhooks:manage'], mode: 'test' });
    const route = receiver.route('integrator');
    const endpoint = (await call('POST', '/api/cdp/webhooks/endpoints', key, { url: route.url, description: 'all lifecycle events' })).json();
    expect(endpoint.secret).toMatch(/^whsec_/);
    expect((await call('PUT', '/api/cdp/policies/default', key, { limits: { USD: { per_transaction_cents: 50_000, review_above_cents: 20_000 } } })).statusCode).toBe(200);

    const decision = (
      await call('POST', '/api/cdp/authorize', key, {
        amount_cents: 30_000,
        currency: 'USD',
        merchant_id: 'm_hotel',
        purpose_tag: 'travel',
        delegated_authority: 'agent-7',
        expiration_iso: new Date(Date.now() + 3600_000).toISOString(),
      })
    ).json();
    expect(decision.decision).toBe('needs_review');
    expect((await call('POST', `/api/cdp/approvals/${decision.authorization_id}/approve`, key, { note: 'approved by finance' })).statusCode).toBe(200);
    expect((await call('POST', `/api/cdp/transactions/${decision.transaction_id}/execute`, key)).statusCode).toBe(200);

    const expected = ['authorization.requested', 'authorization.escalated', 'authorization.human_approved', 'execution.initiated', 'execution.succeeded', 'receipt.issued'];
    const got = await eventually(() => (receiver.on(route.path).length >= expected.length ? receiver.on(route.path) : null), 30_000, 'all lifecycle deliveries');
    const bodies = got.map((r) => JSON.parse(r.body));
    const ordered = [...bodies].sort((a, b) => a.sequence - b.sequence);
    expect(ordered.map((b) => b.event_type)).toEqual(expected);
    expect(ordered.map((b) => b.sequence)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(new Set(got.map((r) => r.headers['webhook-id'])).size).toBe(expected.length);
    for (const b of ordered) expect(b).toMatchObject({ transaction_id: decision.transaction_id, timestamp: expect.any(String), actor: { type: expect.any(String) }, status: expect.any(String) });
    expect(ordered.map((b) => b.status)).toEqual(['evaluating', 'needs_review', 'authorized', 'authorized', 'executed', 'receipt_issued']);
    expect(ordered[0].actor).toEqual({ type: 'api_key', id: key_id });

    const keys = (await t.app.inject({ method: 'GET', url: '/.well-known/signing-keys.json' })).json();
    const standard = new Webhook(endpoint.secret.slice('whsec_'.length));
    for (const r of got) {
      const headers = { 'webhook-id': String(r.headers['webhook-id']), 'webhook-timestamp': String(r.headers['webhook-timestamp']), 'webhook-signature': String(r.headers['webhook-signature']) };
      expect(() => standard.verify(r.body, headers)).not.toThrow();
      expect(verifyWebhook(r.body, headers, endpoint.secret)).toMatchObject({ valid: true });
      expect(verifyWebhook(r.body, headers, keys)).toMatchObject({ valid: true });
    }

    // The receipt and the timeline verify with the SDK alone.
    const receipt = (await call('GET', `/api/cdp/receipts/${decision.transaction_id}`, key)).json();
    expect(verifyReceipt(receipt, keys)).toMatchObject({ valid: true });
    const timeline = (await call('GET', `/api/cdp/transactions/${decision.transaction_id}/events`, key)).json();
    expect(verifyTimeline(timeline, { includesHash: receipt.payload.timeline_last_event_hash, keys })).toMatchObject({ valid: true, anchor: { state: 'anchored' } });
    // The webhook-ids are the timeline's event ids: a consumer can join them. The anchor that ends
    // the timeline is no state change and no spec event type: it is not delivered.
    const lifecycle = timeline.events.filter((e: { event_type: string }) => e.event_type !== 'timeline.anchored');
    expect(timeline.events).toHaveLength(lifecycle.length + 1);
    expect(new Set(got.map((r) => r.headers['webhook-id']))).toEqual(new Set(lifecycle.map((e: { event_id: string }) => e.event_id)));
  }, 60_000);
});
