import { AccessService } from '@app/access';
import { ExpirySweep } from '@app/commerce';
import { verifyTimeline } from '@app/sdk';
import { startTestApp, TestApp } from './support/test-app';

type Entry = { event_type: string; status: string; entered: string[] };

/**
 * The spec's seven states (initiated, evaluating, needs_review, authorized, executed,
 * receipt_issued, rejected) and the two ends it leaves unnamed (declined, expired) can each be
 * observed over the API. `initiated` and `evaluating` never rest (the decision is recorded with
 * the request), so the timeline shows them: authorization.requested enters `initiated` then
 * `evaluating`, and the decision event that follows it leaves `evaluating`.
 */
describe('every lifecycle state is observable (e2e)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMITS: 'off' });
  }, 60_000);
  afterAll(() => t?.close());

  const call = (method: 'GET' | 'POST' | 'PUT', url: string, key: string, payload?: unknown) =>
    t.app.inject({ method, url, ...(payload === undefined ? {} : { payload: payload as object }), headers: { authorization: `Bearer ${key}` } });

  it('the timeline, the transaction, and the list filter between them show all nine statuses', async () => {
    const access = t.app.get(AccessService);
    const org = await access.createOrganization('states');
    const { key } = await access.createApiKey(org.org_id, { scopes: ['payments:write', 'payments:read', 'receipts:read', 'approvals:manage'], mode: 'test' });
    const policy = { limits: { USD: { per_transaction_cents: 50_000, review_above_cents: 20_000 } } };
    expect((await call('PUT', '/api/cdp/policies/default', key, policy)).statusCode).toBe(200);
    const authorize = async (amount: number, expiresInMs = 3600_000) =>
      (
        await call('POST', '/api/cdp/authorize', key, {
          amount_cents: amount,
          currency: 'USD',
          merchant_id: 'm_books',
          purpose_tag: 'software',
          expiration_iso: new Date(Date.now() + expiresInMs).toISOString(),
        })
      ).json() as { transaction_id: string; authorization_id: string; decision: string; status: string };
    const observed = new Map<string, string>();
    const see = (status: string, where: string) => observed.has(status) || observed.set(status, where);
    // The signing keys: a terminal timeline ends with a signed anchor, checked against them.
    const withKeys = { keys: (await t.app.inject({ method: 'GET', url: '/.well-known/signing-keys.json' })).json() };
    const timeline = async (txn: string) => {
      const doc = (await call('GET', `/api/cdp/transactions/${txn}/events`, key)).json();
      expect(verifyTimeline(doc, withKeys)).toMatchObject({ valid: true });
      const entries = doc.events as Entry[];
      for (const e of entries) for (const s of [e.status, ...(e.entered ?? [])]) if (typeof s === 'string') see(s, `timeline ${e.event_type}`);
      return entries;
    };
    const current = async (txn: string) => {
      const status = (await call('GET', `/api/cdp/transactions/${txn}`, key)).json().status as string;
      see(status, 'GET transaction');
      return status;
    };

    // Authorized, executed, receipt issued: the timeline of a settled payment.
    const paid = await authorize(1_000);
    expect(paid).toMatchObject({ decision: 'authorized', status: 'authorized' });
    expect(await current(paid.transaction_id)).toBe('authorized');
    expect((await call('POST', `/api/cdp/transactions/${paid.transaction_id}/execute`, key)).statusCode).toBe(200);
    const settled = await timeline(paid.transaction_id);
    expect(settled[0]).toMatchObject({ event_type: 'authorization.requested', status: 'evaluating', entered: ['initiated', 'evaluating'] });
    expect(settled[1]).toMatchObject({ event_type: 'authorization.approved', status: 'authorized', entered: ['authorized'] });
    expect(settled.find((e) => e.event_type === 'execution.initiated')).toMatchObject({ status: 'authorized', entered: [] });
    expect(settled.find((e) => e.event_type === 'execution.succeeded')).toMatchObject({ status: 'executed', entered: ['executed'] });
    expect(settled.find((e) => e.event_type === 'receipt.issued')).toMatchObject({ status: 'receipt_issued', entered: ['receipt_issued'] });
    expect(await current(paid.transaction_id)).toBe('receipt_issued');

    // Needs review, then rejected by a person; and rejected by the policy.
    const held = await authorize(30_000);
    expect(held).toMatchObject({ decision: 'needs_review', status: 'needs_review' });
    expect(await current(held.transaction_id)).toBe('needs_review');
    expect((await call('POST', `/api/cdp/approvals/${held.authorization_id}/reject`, key, {})).statusCode).toBe(200);
    expect(await current(held.transaction_id)).toBe('rejected');
    const blocked = await authorize(60_000);
    expect(blocked).toMatchObject({ decision: 'blocked', status: 'rejected' });
    expect((await timeline(blocked.transaction_id)).slice(0, 2)).toMatchObject([
      { event_type: 'authorization.requested', entered: ['initiated', 'evaluating'] },
      { event_type: 'authorization.rejected', status: 'rejected', entered: ['rejected'] },
    ]);

    // Declined by the provider (the sandbox declines amounts ending in 02), and expired unexecuted.
    const declined = await authorize(1_002);
    expect((await call('POST', `/api/cdp/transactions/${declined.transaction_id}/execute`, key)).statusCode).toBe(402);
    expect(await current(declined.transaction_id)).toBe('declined');
    const lapsing = await authorize(1_000, 1_000);
    await new Promise((r) => setTimeout(r, 1_100));
    await t.app.get(ExpirySweep).tick();
    expect(await current(lapsing.transaction_id)).toBe('expired');

    expect(Object.fromEntries([...observed].sort())).toEqual({
      authorized: 'GET transaction',
      declined: 'GET transaction',
      evaluating: 'timeline authorization.requested',
      executed: 'timeline execution.succeeded',
      expired: 'GET transaction',
      initiated: 'timeline authorization.requested',
      needs_review: 'GET transaction',
      receipt_issued: 'timeline receipt.issued',
      rejected: 'GET transaction',
    });

    // The list filter takes every status; initiated and evaluating never rest, so they match nothing.
    const listed = async (status: string) => {
      const res = await call('GET', `/api/cdp/transactions?status=${status}`, key);
      expect(res.statusCode).toBe(200);
      return res.json().items.map((i: { transaction_id: string }) => i.transaction_id) as string[];
    };
    expect(await listed('initiated')).toEqual([]);
    expect(await listed('evaluating')).toEqual([]);
    expect(await listed('receipt_issued')).toEqual([paid.transaction_id]);
    expect((await listed('rejected')).sort()).toEqual([held.transaction_id, blocked.transaction_id].sort());
    expect(await listed('declined')).toEqual([declined.transaction_id]);
    expect(await listed('expired')).toEqual([lapsing.transaction_id]);
    const bad = await call('GET', '/api/cdp/transactions?status=pending', key);
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ error: 'validation_failed', details: [expect.objectContaining({ field: 'status' })] });
  }, 60_000);
});
