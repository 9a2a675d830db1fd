import { randomBytes } from 'node:crypto';
import { AccessService } from '@app/access';
import { KEY_ENCRYPTION_KEY } from '@app/core';
import { EventStore, SqlDatabase } from '@app/event-store';
import { SigningKeyRepository, SigningKeyStore } from '@app/notary';
import { verifyReceipt } from '@app/sdk';
import { isolatedEnv } from './support/isolated-env';
import { startTestApp, TestApp } from './support/test-app';

/**
 * Commerce signs with the same key ring as the notary. A process that has not heard yet that
 * another one revoked the active key (its NOTIFY is late) still signs with it: the decision record,
 * the review, the receipt or the anchor is refused as it is written, the process reloads its keys
 * and signs again, and answers 200 with records that verify under the key that replaced it.
 * Nothing signed by the revoked key is ever recorded.
 */
describe('commerce records signed by a process whose signing keys are out of date (e2e)', () => {
  let t: TestApp;
  let iso: Awaited<ReturnType<typeof isolatedEnv>> | undefined;
  let ring: SigningKeyStore;
  beforeAll(async () => {
    // Its own schema in the PostgreSQL pass: it revokes signing keys.
    iso = await isolatedEnv();
    t = await startTestApp({ ...iso.env, RATE_LIMITS: 'off' });
    // The process's ring hears no change, as if the other process's NOTIFY had not arrived yet.
    ring = t.app.get(SigningKeyStore);
    await ring.stop();
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await iso?.dispose();
  });

  const call = (method: 'GET' | 'POST' | 'PUT', url: string, key: string | null, payload?: unknown) =>
    t.app.inject({ method, url, ...(payload === undefined ? {} : { payload: payload as object }), headers: key ? { authorization: `Bearer ${key}` } : {} });
  const org = async () => {
    const access = t.app.get(AccessService);
    const o = await access.createOrganization(`revoked-${randomBytes(3).toString('hex')}`);
    const agent = await access.createApiKey(o.org_id, { scopes: ['payments:write', 'payments:read', 'receipts:read'], mode: 'test' });
    const reviewer = await access.createApiKey(o.org_id, { scopes: ['approvals:manage', 'payments:read'], mode: 'test' });
    expect((await call('PUT', '/api/cdp/policies/default', agent.key, { limits: { USD: { per_transaction_cents: 50_000, review_above_cents: 20_000 } } })).statusCode).toBe(200);
    return { orgId: o.org_id, agent: agent.key, reviewer: reviewer.key };
  };
  const authorize = (key: string, amount = 1_500) =>
    call('POST', '/api/cdp/authorize', key, { amount_cents: amount, currency: 'USD', merchant_id: 'm_books', purpose_tag: 'software', expiration_iso: new Date(Date.now() + 3600_000).toISOString() });
  /** Another process, on the same database, revokes the key this process still signs with. */
  const revokeBehindItsBack = async () => {
    const other = new SigningKeyStore(SigningKeyRepository.on(t.app.get(SqlDatabase), t.app.get(EventStore)), t.app.get<Buffer>(KEY_ENCRYPTION_KEY));
    await other.start();
    await ring.refresh(); // up to date before it, so each case starts from one revocation it has not heard of
    const compromised = ring.current.active().key_id;
    const [{ p }] = await t.app.get(SqlDatabase).query<{ p: string | number }>('SELECT coalesce(max(global_position), 0) AS p FROM events');
    const { activated } = await other.revoke(compromised);
    await other.stop();
    expect(ring.current.active().key_id).toBe(compromised); // stale
    return { compromised, activated: activated!.key_id, revokedAfter: String(p) };
  };
  const keysDocument = async () => (await call('GET', '/.well-known/signing-keys.json', null)).json();
  /** The organization's commerce events recorded after the revocation carrying a record signed by the revoked key. */
  const signedUnder = async (orgId: string, { compromised: keyId, revokedAfter }: { compromised: string; revokedAfter: string }) => {
    const [{ n }] = await t.app.get(SqlDatabase).query<{ n: string | number }>(
      `SELECT count(*) AS n FROM events WHERE stream_id LIKE 'transaction-%' AND data->>'organization_id' = $2 AND global_position > $3::bigint AND $1 IN (
         data->'decision_record'->'signature'->>'key_id', data->'review_record'->'signature'->>'key_id',
         data->'receipt'->'signature'->>'key_id', data->'anchor'->'signature'->>'key_id')`,
      [keyId, orgId, revokedAfter],
    );
    return Number(n);
  };

  it('an authorization answers 200 with a decision record signed again under the new key, which verifies', async () => {
    const { orgId, agent } = await org();
    const revoked = await revokeBehindItsBack();
    const { activated } = revoked;
    const res = await authorize(agent);
    expect(res.statusCode).toBe(200);
    const d = res.json();
    expect(d.decision).toBe('authorized');
    const doc = (await call('GET', `/api/cdp/transactions/${d.transaction_id}/decision`, agent)).json();
    expect(doc.signature.key_id).toBe(activated);
    expect(verifyReceipt(doc, await keysDocument(), { expectedSchema: 'payment_decision.v1' })).toMatchObject({ valid: true, key_id: activated });
    expect(await signedUnder(orgId, revoked)).toBe(0);
    expect(ring.current.active().key_id).toBe(activated); // reloaded on the refusal
  });

  it('a batch of concurrent authorizations (one group commit) all answer 200, each re-signed and verifying', async () => {
    const { orgId, agent } = await org();
    const revoked = await revokeBehindItsBack();
    const { activated } = revoked;
    // A blocked merchant too: the rejection ends its transaction, and its anchor is signed fresh as well.
    const all = await Promise.all([
      ...Array.from({ length: 12 }, (_, i) => authorize(agent, 1_000 + i)),
      call('POST', '/api/cdp/authorize', agent, { amount_cents: 60_000, currency: 'USD', merchant_id: 'm_books', purpose_tag: 'software', expiration_iso: new Date(Date.now() + 3600_000).toISOString() }),
    ]);
    const keys = await keysDocument();
    for (const res of all) {
      expect(res.statusCode).toBe(200);
      const doc = (await call('GET', `/api/cdp/transactions/${res.json().transaction_id}/decision`, agent)).json();
      expect(verifyReceipt(doc, keys, { expectedSchema: 'payment_decision.v1' })).toMatchObject({ valid: true, key_id: activated });
    }
    const blocked = all[all.length - 1].json();
    expect(blocked.status).toBe('rejected');
    const timeline = (await call('GET', `/api/cdp/transactions/${blocked.transaction_id}/events`, agent)).json();
    expect(timeline.anchor).toMatchObject({ valid: true, state: 'anchored', key_id: activated });
    expect(await signedUnder(orgId, revoked)).toBe(0);
  });

  it('an approval answers 200 with a review signed again under the new key, which verifies', async () => {
    const { orgId, agent, reviewer } = await org();
    const d = (await authorize(agent, 30_000)).json();
    expect(d.decision).toBe('needs_review');
    const revoked = await revokeBehindItsBack();
    const { activated } = revoked;
    const res = await call('POST', `/api/cdp/approvals/${d.authorization_id}/approve`, reviewer, { note: 'ok' });
    expect(res.statusCode).toBe(200);
    const doc = (await call('GET', `/api/cdp/transactions/${d.transaction_id}/decision`, agent)).json();
    expect(doc.reviews).toHaveLength(1);
    expect(verifyReceipt(doc.reviews[0], await keysDocument(), { expectedSchema: 'payment_review.v1' })).toMatchObject({ valid: true, key_id: activated });
    expect(await signedUnder(orgId, revoked)).toBe(0);
  });

  it('an execution answers 200 with a receipt signed again under the new key, which verifies, and its timeline is anchored under it', async () => {
    const { orgId, agent } = await org();
    const d = (await authorize(agent)).json();
    const revoked = await revokeBehindItsBack();
    const { activated } = revoked;
    const res = await call('POST', `/api/cdp/transactions/${d.transaction_id}/execute`, agent);
    expect(res.statusCode).toBe(200);
    const receipt = (await call('GET', `/api/cdp/receipts/${d.transaction_id}`, agent)).json();
    expect(verifyReceipt(receipt, await keysDocument())).toMatchObject({ valid: true, key_id: activated });
    expect((await call('POST', '/api/cdp/receipts/verify', null, receipt)).json()).toMatchObject({ verified: true });
    const timeline = (await call('GET', `/api/cdp/transactions/${d.transaction_id}/events`, agent)).json();
    expect(timeline.anchor).toMatchObject({ valid: true, state: 'anchored', terminal_status: 'receipt_issued', key_id: activated });
    expect(await signedUnder(orgId, revoked)).toBe(0);
  });
});
