import { createPublicKey, randomBytes, verify as edVerify } from 'node:crypto';
import { AccessService, Scope } from '@app/access';
import { canonicalJson, sha256Hex } from '@app/crypto';
import { ExpirySweep } from '@app/commerce';
import { SqlDatabase } from '@app/event-store';
import { LookupResult, SettlementProvider, SettleOutcome, SettleRequest } from '@app/settlement';
import { lapseIdempotencyClaim } from './support/lapsed-claim';
import { startTestApp, TestApp } from './support/test-app';

/** A provider whose outcomes the test scripts; it remembers settlements by idempotency key. */
class ScriptedProvider extends SettlementProvider {
  readonly name = 'sandbox';
  readonly requests: SettleRequest[] = [];
  readonly settled = new Map<string, LookupResult>();
  next: Array<SettleOutcome | 'timeout_after_settling'> = [];
  async settle(request: SettleRequest): Promise<SettleOutcome> {
    this.requests.push(request);
    const done = this.settled.get(request.idempotency_key);
    if (done && done.outcome !== 'not_found') return done;
    const step = this.next.shift() ?? { outcome: 'succeeded', provider_reference: `ref_${this.requests.length}` };
    if (step === 'timeout_after_settling') {
      this.settled.set(request.idempotency_key, { outcome: 'succeeded', provider_reference: `ref_late_${this.requests.length}` });
      return { outcome: 'unknown' };
    }
    if (step.outcome === 'succeeded' || step.outcome === 'declined') this.settled.set(request.idempotency_key, step);
    return step;
  }
  async lookup(key: string): Promise<LookupResult> {
    return this.settled.get(key) ?? { outcome: 'not_found' };
  }
  settlementsOf(key: string): number {
    return this.requests.filter((r) => r.idempotency_key === key).length;
  }
}

const POLICY = {
  limits: { USD: { per_transaction_cents: 50_000, review_above_cents: 20_000 } },
  spend_caps: [{ window: 'daily', currency: 'USD', amount_cents: 100_000 }],
  merchants: { blocked: ['m_bad'], allowed: null },
  purposes: { permitted: ['travel', 'software'] },
  agents: { 'agent-7': { per_transaction_cents: 1_000 } },
};

describe('agent commerce lifecycle (e2e)', () => {
  let t: TestApp;
  const provider = new ScriptedProvider();
  beforeAll(async () => {
    t = await startTestApp({ TRUST_PROXY: 'true' }, [], { settlementProvider: provider });
  });
  afterAll(async () => {
    await t?.close();
  });

  const ip = () => `10.${randomBytes(1)[0]}.${randomBytes(1)[0]}.${randomBytes(1)[0]}`;
  const ALL: Scope[] = ['payments:write', 'payments:read', 'receipts:read', 'approvals:manage'];
  const orgWithKey = async (scopes: Scope[] = ALL, policy: object | null = POLICY) => {
    const access = t.app.get(AccessService);
    const org = await access.createOrganization(`commerce-${randomBytes(3).toString('hex')}`);
    const key = (await access.createApiKey(org.org_id, { scopes, mode: 'test' })).key;
    if (policy) {
      const admin = (await access.createApiKey(org.org_id, { scopes: ['payments:write'], mode: 'test' })).key;
      const put = await call('PUT', '/api/cdp/policies/default', admin, policy);
      expect(put.statusCode).toBe(200);
    }
    return { orgId: org.org_id, key };
  };
  const call = (method: 'GET' | 'POST' | 'PUT', url: string, key: string | null, payload?: unknown, headers: Record<string, string> = {}) =>
    t.app.inject({ method, url, ...(payload === undefined ? {} : { payload: payload as object }), headers: { 'x-forwarded-for': ip(), ...(key ? { authorization: `Bearer ${key}` } : {}), ...headers } });
  /** Waits until an instant has passed (a window's end), however long the request before it took. */
  const untilPast = (instant: string) => new Promise((r) => setTimeout(r, Math.max(0, Date.parse(instant) - Date.now()) + 100));
  const inOneHour = () => new Date(Date.now() + 3600_000).toISOString();
  const request = (over: Record<string, unknown> = {}) => ({
    amount_cents: 1_500,
    currency: 'USD',
    merchant_id: 'm_airline',
    purpose_tag: 'travel',
    expiration_iso: inOneHour(),
    ...over,
  });
  const authorize = async (key: string, over: Record<string, unknown> = {}) => {
    const res = await call('POST', '/api/cdp/authorize', key, request(over));
    expect(res.statusCode).toBe(200);
    return res.json();
  };
  const eventTypes = async (key: string, txn: string) => {
    const res = await call('GET', `/api/cdp/transactions/${txn}/events`, key);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.chain_valid).toBe(true);
    return body.events.map((e: { event_type: string }) => e.event_type);
  };

  it('authorizes within policy, with the spec decision fields, and records requested then approved', async () => {
    const { key } = await orgWithKey();
    const d = await authorize(key);
    expect(d).toMatchObject({ decision: 'authorized', policy_id: 'default', reason_code: null, status: 'authorized' });
    expect(d.authorization_id).toMatch(/^auth_[0-9a-f]{32}$/);
    expect(d.transaction_id).toMatch(/^txn_[0-9a-f]{32}$/);
    expect(d.policy_hash).toBe(sha256Hex(canonicalJson(POLICY)));
    expect(new Date(d.created_at).toISOString()).toBe(d.created_at);
    expect(await eventTypes(key, d.transaction_id)).toEqual(['authorization.requested', 'authorization.approved']);
    const state = (await call('GET', `/api/cdp/transactions/${d.transaction_id}`, key)).json();
    expect(state).toMatchObject({ transaction_id: d.transaction_id, status: 'authorized', amount_cents: 1500, currency: 'USD', merchant_id: 'm_airline' });
  });

  it.each([
    ['AMOUNT_EXCEEDS_LIMIT', { amount_cents: 50_001 }],
    ['AMOUNT_EXCEEDS_LIMIT', { currency: 'EUR' }],
    ['AMOUNT_EXCEEDS_LIMIT', { delegated_authority: 'agent-7', amount_cents: 1_001 }],
    ['MERCHANT_BLOCKED', { merchant_id: 'm_bad' }],
    ['PURPOSE_NOT_PERMITTED', { purpose_tag: 'gambling' }],
    ['EXPIRED', { expiration_iso: new Date(Date.now() - 1000).toISOString() }],
  ])('blocks with %s, recorded with a signed decision record', async (reason, over) => {
    const { key } = await orgWithKey();
    const d = await authorize(key, over);
    expect(d).toMatchObject({ decision: 'blocked', reason_code: reason, status: 'rejected' });
    // A refusal ends the transaction: its timeline ends with the signed anchor (eventTypes checks chain_valid).
    expect(await eventTypes(key, d.transaction_id)).toEqual(['authorization.requested', 'authorization.rejected', 'timeline.anchored']);
    const record = (await call('GET', `/api/cdp/transactions/${d.transaction_id}/decision`, key)).json();
    expect(record).toMatchObject({ schema_version: 'payment_decision.v1', payload: { decision: 'blocked', reason_code: reason, transaction_id: d.transaction_id } });
    const verified = (await call('POST', '/api/cdp/receipts/verify', null, record)).json();
    expect(verified).toMatchObject({ verified: true, schema_version: 'payment_decision.v1' });
    const replay = (await call('GET', `/api/cdp/transactions/${d.transaction_id}/replay`, key)).json();
    expect(replay).toMatchObject({ reproduced: true, recorded: { decision: 'blocked', reason_code: reason }, replayed: { decision: 'blocked', reason_code: reason } });
  });

  it('blocks with POLICY_NOT_FOUND when the organization has no policy', async () => {
    const { key } = await orgWithKey(ALL, null);
    expect(await authorize(key)).toMatchObject({ decision: 'blocked', reason_code: 'POLICY_NOT_FOUND', policy_hash: null });
  });

  it('escalates above the review threshold; a reviewer approves a lower amount; execution issues a receipt that verifies offline', async () => {
    const { key } = await orgWithKey();
    const d = await authorize(key, { amount_cents: 30_000 });
    expect(d).toMatchObject({ decision: 'needs_review', reason_code: 'REVIEW_REQUIRED', status: 'needs_review' });
    const queue = (await call('GET', '/api/cdp/approvals', key)).json();
    expect(queue.items.map((i: { authorization_id: string }) => i.authorization_id)).toContain(d.authorization_id);

    const early = await call('POST', `/api/cdp/transactions/${d.transaction_id}/execute`, key);
    expect(early.statusCode).toBe(409);
    expect(early.json().error).toBe('transaction_not_authorized');

    const approved = await call('POST', `/api/cdp/approvals/${d.authorization_id}/approve`, key, { note: 'ok for the conference', amount_cents: 25_000 });
    expect(approved.statusCode).toBe(200);
    expect(approved.json()).toMatchObject({ status: 'authorized', approved_amount_cents: 25_000 });
    const again = await call('POST', `/api/cdp/approvals/${d.authorization_id}/approve`, key, {});
    expect(again.statusCode).toBe(409);
    expect(again.json().error).toBe('authorization_not_pending');

    const executed = await call('POST', `/api/cdp/transactions/${d.transaction_id}/execute`, key);
    expect(executed.statusCode).toBe(200);
    expect(executed.json()).toMatchObject({ outcome: 'succeeded', transaction: { status: 'receipt_issued' } });
    expect(await eventTypes(key, d.transaction_id)).toEqual([
      'authorization.requested',
      'authorization.escalated',
      'authorization.human_approved',
      'execution.initiated',
      'execution.succeeded',
      'receipt.issued',
      'timeline.anchored',
    ]);
    const timeline = (await call('GET', `/api/cdp/transactions/${d.transaction_id}/events`, key)).json();
    expect(timeline.anchor).toMatchObject({ valid: true, state: 'anchored', terminal_status: 'receipt_issued', record: { payload: { last_event_hash: timeline.events[5].hash } } });
    const human = timeline.events[2];
    expect(human).toMatchObject({ actor: { type: 'api_key' }, status: 'authorized', metadata: { note: 'ok for the conference', amount_cents: 25_000 } });

    const receiptRes = await call('GET', `/api/cdp/receipts/${d.transaction_id}`, key);
    expect(receiptRes.statusCode).toBe(200);
    const receipt = receiptRes.json();
    expect(receipt).toMatchObject({ schema_version: 'payment_receipt.v1', payload: { transaction_id: d.transaction_id, amount_cents: 25_000, currency: 'USD', provider: 'sandbox' } });
    expect(receipt.payload.timeline_last_event_hash).toBe(timeline.events[4].hash);
    // Offline: recompute the hash and check the Ed25519 signature against the published key.
    const digest = sha256Hex(canonicalJson(receipt.payload));
    expect(receipt.receipt_hash).toBe(`sha256:${digest}`);
    const keys = (await call('GET', '/.well-known/signing-keys.json', null)).json();
    const pub = keys.keys.find((k: { key_id: string }) => k.key_id === receipt.signature.key_id);
    const publicKey = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: pub.public_key }, format: 'jwk' });
    expect(edVerify(null, Buffer.from(digest, 'ascii'), publicKey, Buffer.from(receipt.signature.value, 'base64url'))).toBe(true);

    expect((await call('POST', '/api/cdp/receipts/verify', null, receipt)).json()).toMatchObject({ verified: true, transaction_id: d.transaction_id });
    const tampered = { ...receipt, payload: { ...receipt.payload, amount_cents: 1 } };
    expect((await call('POST', '/api/cdp/receipts/verify', null, tampered)).json()).toMatchObject({ verified: false, reason: 'hash_mismatch' });
    const forged = { ...tampered, receipt_hash: `sha256:${sha256Hex(canonicalJson(tampered.payload))}` };
    expect((await call('POST', '/api/cdp/receipts/verify', null, forged)).json()).toMatchObject({ verified: false, reason: 'signature_invalid' });

    // Executing again returns the settled transaction; the provider is not charged twice.
    const charges = provider.settlementsOf(d.transaction_id);
    const repeat = await call('POST', `/api/cdp/transactions/${d.transaction_id}/execute`, key);
    expect(repeat.json()).toMatchObject({ outcome: 'already_executed' });
    expect(provider.settlementsOf(d.transaction_id)).toBe(charges);
  });

  it('escalated then rejected by a reviewer releases the reserved spend', async () => {
    const { key } = await orgWithKey();
    const d = await authorize(key, { amount_cents: 45_000 });
    const rejected = await call('POST', `/api/cdp/approvals/${d.authorization_id}/reject`, key, { note: 'not this one' });
    expect(rejected.statusCode).toBe(200);
    expect(rejected.json()).toMatchObject({ status: 'rejected', reason_code: 'REJECTED_BY_REVIEWER' });
    expect(await eventTypes(key, d.transaction_id)).toEqual(['authorization.requested', 'authorization.escalated', 'authorization.rejected', 'timeline.anchored']);
    // 45,000 released: three more of 30,000 (escalated, each reserving) still fit under 100,000.
    for (let i = 0; i < 3; i++) expect((await authorize(key, { amount_cents: 30_000 })).decision).toBe('needs_review');
    expect(await authorize(key, { amount_cents: 30_000 })).toMatchObject({ decision: 'blocked', reason_code: 'SPEND_CAP_EXCEEDED' });
  });

  it('escalated then expired: the sweep rejects with EXPIRED as the system, and a late approval gets 409', async () => {
    const { key } = await orgWithKey();
    const d = await authorize(key, { amount_cents: 30_000, expiration_iso: new Date(Date.now() + 3000).toISOString() });
    expect(d.decision).toBe('needs_review');
    await untilPast(d.expires_at);
    await t.app.get(ExpirySweep).tick();
    const late = await call('POST', `/api/cdp/approvals/${d.authorization_id}/approve`, key, {});
    expect(late.statusCode).toBe(409);
    expect(late.json().error).toBe('authorization_not_pending');
    const timeline = (await call('GET', `/api/cdp/transactions/${d.transaction_id}/events`, key)).json();
    expect(timeline.events.map((e: { event_type: string }) => e.event_type)).toEqual(['authorization.requested', 'authorization.escalated', 'authorization.rejected', 'timeline.anchored']);
    expect(timeline.events[2]).toMatchObject({ actor: { type: 'system', id: 'expiry-sweep' }, metadata: { reason_code: 'EXPIRED', rejected_by: 'expiry' } });
    expect(timeline).toMatchObject({ chain_valid: true, anchor: { state: 'anchored', terminal_status: 'rejected' } });
  });

  it('a decision after the window closed records the expiry, not the human decision', async () => {
    const { key } = await orgWithKey();
    const d = await authorize(key, { amount_cents: 30_000, expiration_iso: new Date(Date.now() + 3000).toISOString() });
    expect(d.decision).toBe('needs_review');
    await untilPast(d.expires_at);
    const late = await call('POST', `/api/cdp/approvals/${d.authorization_id}/approve`, key, {});
    expect(late.statusCode).toBe(409);
    expect(late.json().error).toBe('authorization_expired');
    const state = (await call('GET', `/api/cdp/transactions/${d.transaction_id}`, key)).json();
    expect(state).toMatchObject({ status: 'rejected', reason_code: 'EXPIRED' });
  });

  it('approve and reject racing give exactly one outcome; the loser gets 409', async () => {
    const { key } = await orgWithKey();
    const d = await authorize(key, { amount_cents: 30_000 });
    const results = await Promise.all([
      call('POST', `/api/cdp/approvals/${d.authorization_id}/approve`, key, {}),
      call('POST', `/api/cdp/approvals/${d.authorization_id}/reject`, key, {}),
      call('POST', `/api/cdp/approvals/${d.authorization_id}/approve`, key, {}),
    ]);
    expect(results.map((r) => r.statusCode).sort()).toEqual([200, 409, 409]);
    const types = await eventTypes(key, d.transaction_id);
    // One decision recorded (and, when it was the rejection, the anchor that ends the timeline).
    expect(types.filter((x: string) => x !== 'timeline.anchored')).toHaveLength(3);
  });

  it('execution failed then retried: the transaction stays authorized and the retry reuses the provider key', async () => {
    const { key } = await orgWithKey();
    const d = await authorize(key);
    provider.next.push({ outcome: 'failed', code: 'provider_5xx', retryable: true });
    const failed = await call('POST', `/api/cdp/transactions/${d.transaction_id}/execute`, key);
    expect(failed.statusCode).toBe(502);
    expect(failed.json()).toMatchObject({ error: 'settlement_failed', details: { retryable: true, transaction: { status: 'authorized' } } });
    const ok = await call('POST', `/api/cdp/transactions/${d.transaction_id}/execute`, key);
    expect(ok.statusCode).toBe(200);
    expect(await eventTypes(key, d.transaction_id)).toEqual([
      'authorization.requested',
      'authorization.approved',
      'execution.initiated',
      'execution.failed',
      'execution.initiated',
      'execution.succeeded',
      'receipt.issued',
      'timeline.anchored',
    ]);
    expect(provider.settlementsOf(d.transaction_id)).toBe(2);
    expect(provider.requests.filter((r) => r.reference === d.transaction_id).every((r) => r.idempotency_key === d.transaction_id)).toBe(true);
  });

  it('a provider timeout is reconciled by asking the provider, so it never settles twice', async () => {
    const { key } = await orgWithKey();
    const d = await authorize(key);
    provider.next.push('timeout_after_settling');
    const res = await call('POST', `/api/cdp/transactions/${d.transaction_id}/execute`, key);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ outcome: 'succeeded', transaction: { status: 'receipt_issued', provider_reference: expect.stringMatching(/^ref_late_/) } });
    expect(provider.settlementsOf(d.transaction_id)).toBe(1);
  });

  it('a declined payment is final: 402, and no retry', async () => {
    const { key } = await orgWithKey();
    const d = await authorize(key);
    provider.next.push({ outcome: 'declined', code: 'card_declined' });
    const declined = await call('POST', `/api/cdp/transactions/${d.transaction_id}/execute`, key);
    expect(declined.statusCode).toBe(402);
    expect(declined.json().error).toBe('payment_declined');
    expect((await call('POST', `/api/cdp/transactions/${d.transaction_id}/execute`, key)).statusCode).toBe(409);
  });

  it('200 parallel authorizations of 10.00 against a 1,000.00 daily cap give exactly 100 authorized', async () => {
    const { key } = await orgWithKey(ALL, { limits: { USD: { per_transaction_cents: 5_000 } }, spend_caps: [{ window: 'daily', currency: 'USD', amount_cents: 100_000 }] });
    const results = await Promise.all(Array.from({ length: 200 }, () => call('POST', '/api/cdp/authorize', key, request({ amount_cents: 1_000 }))));
    expect(results.every((r) => r.statusCode === 200)).toBe(true);
    const decisions = results.map((r) => r.json());
    expect(decisions.filter((d) => d.decision === 'authorized')).toHaveLength(100);
    expect(decisions.filter((d) => d.decision === 'blocked').every((d) => d.reason_code === 'SPEND_CAP_EXCEEDED')).toBe(true);
  });

  it('a timeline altered in the database fails its chain check', async () => {
    const { key } = await orgWithKey();
    const d = await authorize(key);
    const db = t.app.get(SqlDatabase);
    await db.query(`UPDATE events SET data = jsonb_set(data::jsonb, '{request,amount_cents}', '1')::json WHERE stream_id = $1 AND revision = 0`, [`transaction-${d.transaction_id}`]);
    const timeline = (await call('GET', `/api/cdp/transactions/${d.transaction_id}/events`, key)).json();
    expect(timeline.chain_valid).toBe(false);
    expect(timeline.chain).toMatchObject({ valid: false, broken_at_revision: 0, reason: 'hash_mismatch' });
  });

  it('a decision whose event type was edited, the old type kept as hashed_type, fails its chain check', async () => {
    const { key } = await orgWithKey();
    const d = await authorize(key, { merchant_id: 'm_bad' });
    expect(d.decision).toBe('blocked');
    const db = t.app.get(SqlDatabase);
    await db.query(`UPDATE events SET hashed_type = type, type = 'authorization.approved' WHERE stream_id = $1 AND revision = 1`, [`transaction-${d.transaction_id}`]);
    const timeline = (await call('GET', `/api/cdp/transactions/${d.transaction_id}/events`, key)).json();
    expect(timeline.events[1].event_type).toBe('authorization.approved');
    expect(timeline.chain_valid).toBe(false);
    expect(timeline.chain).toMatchObject({ valid: false, broken_at_revision: 1, reason: 'hash_mismatch' });
  });

  describe('on the real sandbox provider', () => {
    let sandbox: TestApp;
    beforeAll(async () => {
      sandbox = await startTestApp({ TRUST_PROXY: 'true' });
    });
    afterAll(async () => {
      await sandbox?.close();
    });
    const sandboxKey = async () => {
      const access = sandbox.app.get(AccessService);
      const org = await access.createOrganization(`sandbox-${randomBytes(3).toString('hex')}`);
      const k = (await access.createApiKey(org.org_id, { scopes: ALL, mode: 'test' })).key;
      const put = await sandbox.app.inject({ method: 'PUT', url: '/api/cdp/policies/default', payload: { limits: { USD: { per_transaction_cents: 50_000 } } }, headers: { authorization: `Bearer ${k}`, 'x-forwarded-for': ip() } });
      expect(put.statusCode).toBe(200);
      return k;
    };
    const run = async (k: string, amount: number, merchant = 'm_shop') => {
      const d = (await sandbox.app.inject({ method: 'POST', url: '/api/cdp/authorize', payload: request({ amount_cents: amount, merchant_id: merchant }), headers: { authorization: `Bearer ${k}`, 'x-forwarded-for': ip() } })).json();
      expect(d.decision).toBe('authorized');
      const execute = () => sandbox.app.inject({ method: 'POST', url: `/api/cdp/transactions/${d.transaction_id}/execute`, headers: { authorization: `Bearer ${k}`, 'x-forwarded-for': ip() } });
      return { d, execute };
    };
    it('settles, fails once then settles on retry (..05), reconciles a timeout (..08), and declines for good (..02)', async () => {
      const k = await sandboxKey();
      const ok = await run(k, 1_000);
      expect((await ok.execute()).json()).toMatchObject({ outcome: 'succeeded', transaction: { provider: 'sandbox', provider_reference: expect.stringMatching(/^sbx_/) } });

      const flaky = await run(k, 1_005);
      const first = await flaky.execute();
      expect(first.statusCode).toBe(502);
      const retried = await flaky.execute();
      expect(retried.statusCode).toBe(200);
      expect(retried.json().transaction.status).toBe('receipt_issued');

      const slow = await run(k, 1_008);
      const settled = await slow.execute();
      expect(settled.statusCode).toBe(200);
      expect(settled.json().transaction.status).toBe('receipt_issued');
      const [{ n }] = await sandbox.app.get(SqlDatabase).query<{ n: string }>('SELECT count(*) AS n FROM sandbox_settlements WHERE idempotency_key = $1', [slow.d.transaction_id]);
      expect(Number(n)).toBe(1);

      const declined = await run(k, 1_000, 'm_decline');
      expect((await declined.execute()).statusCode).toBe(402);
      expect((await declined.execute()).json().error).toBe('payment_declined');
    });
  });

  describe('idempotency', () => {
    it('replays the first response for the same key and body, refuses a different body with 422', async () => {
      const { key } = await orgWithKey();
      const body = request();
      const first = await call('POST', '/api/cdp/authorize', key, body, { 'idempotency-key': 'pay-1' });
      expect(first.statusCode).toBe(200);
      expect(first.headers['idempotent-replayed']).toBeUndefined();
      // Same body with its keys in another order is the same body (compared by its JCS hash).
      const reordered = Object.fromEntries(Object.entries(body).reverse());
      const replay = await call('POST', '/api/cdp/authorize', key, reordered, { 'idempotency-key': 'pay-1' });
      expect(replay.statusCode).toBe(200);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.json()).toEqual(first.json());
      const reused = await call('POST', '/api/cdp/authorize', key, { ...body, amount_cents: 1_501 }, { 'idempotency-key': 'pay-1' });
      expect(reused.statusCode).toBe(422);
      expect(reused.json().error).toBe('idempotency_key_reused');
      // Keys belong to the organization: another one may use the same key for its own request.
      const { key: other } = await orgWithKey();
      const theirs = await call('POST', '/api/cdp/authorize', other, body, { 'idempotency-key': 'pay-1' });
      expect(theirs.json().transaction_id).not.toBe(first.json().transaction_id);
      expect((await call('GET', '/api/cdp/transactions', key)).json().items).toHaveLength(1);
    });

    it('a process that dies after recording the decision but before storing the answer: the retry answers that decision, never a second transaction', async () => {
      const { key } = await orgWithKey();
      const idem = `crash-${randomBytes(6).toString('hex')}`;
      const body = request();
      const first = await call('POST', '/api/cdp/authorize', key, body, { 'idempotency-key': idem });
      expect(first.statusCode).toBe(200);
      // What the dead process leaves: the key claimed, no answer, its lease run out.
      expect(await lapseIdempotencyClaim(t.app, idem)).toBe(1);
      const retried = await call('POST', '/api/cdp/authorize', key, body, { 'idempotency-key': idem });
      expect(retried.statusCode).toBe(200);
      expect(retried.json()).toEqual(first.json());
      expect((await call('GET', '/api/cdp/transactions', key)).json().items).toHaveLength(1);
      // The retry stored its answer: the next one is a plain replay.
      const replay = await call('POST', '/api/cdp/authorize', key, body, { 'idempotency-key': idem });
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.json()).toEqual(first.json());
      // A different request under a new key is a new transaction.
      const next = await call('POST', '/api/cdp/authorize', key, body, { 'idempotency-key': 'crash-2' });
      expect(next.json().transaction_id).not.toBe(first.json().transaction_id);
    });

    it('50 parallel requests with one key create one transaction, and every response is that transaction', async () => {
      const { key } = await orgWithKey();
      const body = request();
      const responses = await Promise.all(Array.from({ length: 50 }, () => call('POST', '/api/cdp/authorize', key, body, { 'idempotency-key': 'burst' })));
      expect(responses.every((r) => r.statusCode === 200)).toBe(true);
      expect(new Set(responses.map((r) => r.json().transaction_id)).size).toBe(1);
      expect((await call('GET', '/api/cdp/transactions', key)).json().items).toHaveLength(1);
    });

    it('an execute retried with its key replays the outcome without settling again', async () => {
      const { key } = await orgWithKey();
      const d = await authorize(key);
      const first = await call('POST', `/api/cdp/transactions/${d.transaction_id}/execute`, key, undefined, { 'idempotency-key': 'exec-1' });
      const again = await call('POST', `/api/cdp/transactions/${d.transaction_id}/execute`, key, undefined, { 'idempotency-key': 'exec-1' });
      expect(first.statusCode).toBe(200);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.json()).toEqual(first.json());
      expect(provider.settlementsOf(d.transaction_id)).toBe(1);
    });

    it('refuses a malformed Idempotency-Key', async () => {
      const { key } = await orgWithKey();
      const res = await call('POST', '/api/cdp/authorize', key, request(), { 'idempotency-key': 'x'.repeat(256) });
      expect(res.statusCode).toBe(400);
      expect(res.json().error).toBe('invalid_idempotency_key');
    });
  });

  it('lists transactions by state, date, merchant and agent, in stable cursor pages', async () => {
    const { key } = await orgWithKey();
    for (let i = 0; i < 5; i++) await authorize(key, { merchant_id: `m_list_${i % 2}` });
    await authorize(key, { merchant_id: 'm_bad' });
    await authorize(key, { delegated_authority: 'agent-7', amount_cents: 500 });
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { items: { transaction_id: string }[]; next_cursor: string | null } = (
        await call('GET', `/api/cdp/transactions?limit=2${cursor ? `&cursor=${cursor}` : ''}`, key)
      ).json();
      seen.push(...page.items.map((i) => i.transaction_id));
      cursor = page.next_cursor;
    } while (cursor);
    expect(seen).toHaveLength(7);
    expect(new Set(seen).size).toBe(7);
    expect((await call('GET', '/api/cdp/transactions?status=rejected', key)).json().items).toHaveLength(1);
    expect((await call('GET', '/api/cdp/transactions?merchant_id=m_list_0', key)).json().items).toHaveLength(3);
    expect((await call('GET', '/api/cdp/transactions?agent=agent-7', key)).json().items).toHaveLength(1);
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString();
    const yesterday = new Date(Date.now() - 86_400_000).toISOString();
    expect((await call('GET', `/api/cdp/transactions?from=${yesterday}&to=${tomorrow}&limit=50`, key)).json().items).toHaveLength(7);
    expect((await call('GET', `/api/cdp/transactions?from=${tomorrow}`, key)).json().items).toHaveLength(0);
    expect((await call('GET', `/api/cdp/transactions?to=${yesterday}`, key)).json().items).toHaveLength(0);
    expect((await call('GET', '/api/cdp/transactions?from=yesterday', key)).statusCode).toBe(400);
    expect((await call('GET', '/api/cdp/transactions?cursor=garbage', key)).statusCode).toBe(400);
    expect((await call('GET', '/api/cdp/transactions?status=lost', key)).statusCode).toBe(400);
    expect((await call('GET', '/api/cdp/transactions?limit=201', key)).statusCode).toBe(400);
  });

  describe('bad input', () => {
    let key: string;
    beforeAll(async () => {
      key = (await orgWithKey()).key;
    });
    it.each([
      ['a string amount', { amount_cents: '1500' }, 'amount_cents'],
      ['a negative amount', { amount_cents: -5 }, 'amount_cents'],
      ['a float amount', { amount_cents: 10.5 }, 'amount_cents'],
      ['a zero amount', { amount_cents: 0 }, 'amount_cents'],
      ['an unknown currency', { currency: 'XYZ' }, 'currency'],
      ['a lower-case currency', { currency: 'usd' }, 'currency'],
      ['a malformed expiry', { expiration_iso: '2026-13-45T99:00:00Z' }, 'expiration_iso'],
      ['an expiry without a zone', { expiration_iso: '2030-01-01T00:00:00' }, 'expiration_iso'],
      // PostgreSQL refuses year 0 (was 500); year 0 in UTC was stored as a BC date that the embedded
      // driver cannot read back, so every later read of the transaction and the listing was 500.
      ['a year-0 expiry', { expiration_iso: '0000-06-01T00:00:00Z' }, 'expiration_iso'],
      ['an expiry in year 0 once in UTC', { expiration_iso: '0001-01-01T00:00:00+01:00' }, 'expiration_iso'],
      ['an expiry past the year 9999 once in UTC', { expiration_iso: '9999-12-31T23:59:59-01:00' }, 'expiration_iso'],
      ['a merchant display name', { merchant_id: 'Acme Travel Inc.' }, 'merchant_id'],
      ['an unknown field', { tip_cents: 5 }, ''],
    ])('refuses %s with 400 naming the field', async (_what, over, field) => {
      const res = await call('POST', '/api/cdp/authorize', key, request(over));
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ ok: false, error: 'validation_failed' });
      if (field) expect(res.json().details.map((d: { field: string }) => d.field)).toContain(field);
    });
    it('refuses a missing body and missing fields', async () => {
      const res = await call('POST', '/api/cdp/authorize', key, {});
      expect(res.statusCode).toBe(400);
      expect(res.json().details.map((d: { field: string }) => d.field)).toEqual(expect.arrayContaining(['amount_cents', 'currency', 'merchant_id', 'purpose_tag', 'expiration_iso']));
      expect((await call('POST', '/api/cdp/authorize', key, [1, 2])).statusCode).toBe(400);
    });
    it('needs a key with payments:write (401 without, 403 without the scope)', async () => {
      expect((await call('POST', '/api/cdp/authorize', null, request())).statusCode).toBe(401);
      const { key: readOnly } = await orgWithKey(['payments:read']);
      const res = await call('POST', '/api/cdp/authorize', readOnly, request());
      expect(res.statusCode).toBe(403);
      const reviewerless = await call('POST', `/api/cdp/approvals/auth_${'0'.repeat(32)}/approve`, readOnly, {});
      expect(reviewerless.statusCode).toBe(403);
    });
    it("answers 404 for another organization's transactions and authorizations, and 400 for malformed ids", async () => {
      const d = await authorize(key, { amount_cents: 30_000 });
      const { key: other } = await orgWithKey();
      for (const url of [`/api/cdp/transactions/${d.transaction_id}`, `/api/cdp/transactions/${d.transaction_id}/events`, `/api/cdp/transactions/${d.transaction_id}/replay`, `/api/cdp/receipts/${d.transaction_id}`]) {
        expect((await call('GET', url, other)).statusCode).toBe(404);
      }
      expect((await call('POST', `/api/cdp/transactions/${d.transaction_id}/execute`, other)).statusCode).toBe(404);
      expect((await call('POST', `/api/cdp/approvals/${d.authorization_id}/approve`, other, {})).statusCode).toBe(404);
      expect((await call('GET', '/api/cdp/transactions/txn_nothex', key)).statusCode).toBe(400);
      expect((await call('POST', '/api/cdp/approvals/auth_123/approve', key, {})).statusCode).toBe(400);
      expect((await call('GET', '/api/cdp/receipts/123', key)).statusCode).toBe(400);
    });
    it('refuses an approval above the requested amount, and malformed review bodies', async () => {
      const d = await authorize(key, { amount_cents: 30_000 });
      expect((await call('POST', `/api/cdp/approvals/${d.authorization_id}/approve`, key, { amount_cents: 30_001 })).statusCode).toBe(400);
      expect((await call('POST', `/api/cdp/approvals/${d.authorization_id}/approve`, key, { amount_cents: 'all' })).statusCode).toBe(400);
      expect((await call('POST', `/api/cdp/approvals/${d.authorization_id}/reject`, key, { note: 7 })).statusCode).toBe(400);
    });
    it('answers receipts for unsettled transactions with receipt_not_available, and malformed verify bodies with 400', async () => {
      const d = await authorize(key);
      const res = await call('GET', `/api/cdp/receipts/${d.transaction_id}`, key);
      expect(res.statusCode).toBe(404);
      expect(res.json().error).toBe('receipt_not_available');
      expect((await call('POST', '/api/cdp/receipts/verify', null, '"x"', { 'content-type': 'application/json' })).statusCode).toBe(400);
      expect((await call('POST', '/api/cdp/receipts/verify', null, { schema_version: 'payment_receipt.v1' })).json()).toMatchObject({ verified: false, reason: 'malformed' });
    });
  });
});
