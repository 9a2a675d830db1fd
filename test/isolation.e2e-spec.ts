import { randomBytes } from 'node:crypto';
import { AccessService, SCOPES } from '@app/access';
import { invitedPerson } from './support/console-client';
import { startTestApp, TestApp } from './support/test-app';

/**
 * Cross-organization cases no other suite covers: another organization's id is 404 (as a missing
 * one), changes nothing, and its lists never show the first organization's data. (Transactions,
 * approve, execute, receipts, policies, webhooks, keys, users, registry edits and the console
 * pages have theirs in their own suites.)
 */
describe('organizations kept apart (e2e)', () => {
  let t: TestApp;
  let access: AccessService;
  beforeAll(async () => {
    t = await startTestApp({ TRUST_PROXY: 'true' });
    access = t.app.get(AccessService);
  });
  afterAll(() => t?.close());

  const call = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, key: string, payload?: unknown) =>
    t.app.inject({ method, url, headers: { authorization: `Bearer ${key}`, 'x-forwarded-for': `10.7.${randomBytes(1)[0]}.${randomBytes(1)[0]}` }, ...(payload === undefined ? {} : { payload: payload as object }) });
  const org = async () => {
    const { org_id } = await access.createOrganization(`iso-${randomBytes(3).toString('hex')}`);
    return { orgId: org_id, key: (await access.createApiKey(org_id, { scopes: [...SCOPES], mode: 'test' })).key };
  };

  it("another organization's escalated authorization: its decision record 404, a rejection 404 that changes nothing, absent from its queue and lists", async () => {
    const a = await org();
    const b = await org();
    const policy = { limits: { USD: { per_transaction_cents: 50_000, review_above_cents: 20_000 } } };
    expect((await call('PUT', '/api/cdp/policies/default', a.key, policy)).statusCode).toBe(200);
    expect((await call('PUT', '/api/cdp/policies/default', b.key, policy)).statusCode).toBe(200);
    const request = { amount_cents: 30_000, currency: 'USD', merchant_id: 'm_hotel', purpose_tag: 'travel', expiration_iso: new Date(Date.now() + 3600_000).toISOString() };
    const d = (await call('POST', '/api/cdp/authorize', a.key, request)).json();
    expect(d.decision).toBe('needs_review');

    for (const [method, url] of [
      ['GET', `/api/cdp/transactions/${d.transaction_id}/decision`],
      ['POST', `/api/cdp/approvals/${d.authorization_id}/reject`],
    ] as const) {
      const res = await call(method, url, b.key, method === 'POST' ? { note: 'not yours' } : undefined);
      expect([url, res.statusCode, res.json().error]).toEqual([url, 404, 'not_found']);
    }
    expect((await call('GET', `/api/cdp/transactions/${d.transaction_id}`, a.key)).json()).toMatchObject({ status: 'needs_review' });
    expect((await call('GET', '/api/cdp/approvals', b.key)).json().items).toEqual([]);
    expect((await call('GET', '/api/cdp/transactions', b.key)).json().items).toEqual([]);
    expect((await call('GET', '/api/cdp/approvals', a.key)).json().items.map((i: { transaction_id: string }) => i.transaction_id)).toEqual([d.transaction_id]);
  });

  it("another organization's console session: not listed, and revoking it is 404 and leaves it signed in", async () => {
    const a = await invitedPerson(t.app, access, 'viewer');
    const aKey = (await access.createApiKey(a.orgId, { scopes: ['users:manage'], mode: 'test' })).key;
    const b = await org();
    const [session] = (await call('GET', '/api/sessions', aKey)).json().sessions as { session_id: string; user_id: string }[];
    expect(session).toMatchObject({ session_id: expect.stringMatching(/^ses_/), user_id: expect.stringMatching(/^usr_/) });

    expect((await call('GET', '/api/sessions', b.key)).json().sessions).toEqual([]);
    expect((await call('GET', `/api/sessions?user_id=${session.user_id}`, b.key)).json().sessions).toEqual([]);
    const revoke = await call('DELETE', `/api/sessions/${session.session_id}`, b.key);
    expect([revoke.statusCode, revoke.json().error]).toEqual([404, 'not_found']);
    expect((await a.b.send('GET', '/console/account')).status).toBe(200);
    expect((await call('GET', `/api/sessions?user_id=${session.user_id}`, aKey)).json().sessions).toEqual([expect.objectContaining({ session_id: session.session_id, status: 'active' })]);
  });
});
