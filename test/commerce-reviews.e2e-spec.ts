import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { AccessService } from '@app/access';
import { verifyReceipt } from '@app/sdk';
import { lapseIdempotencyClaim } from './support/lapsed-claim';
import { startTestApp, TestApp } from './support/test-app';

const ROOT = join(__dirname, '..');

/** `node scripts/sigil.js …` (what `npx sigil` runs), offline: no service URL is given. */
function sigil(args: string[]): Promise<{ code: number | null; stdout: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(ROOT, 'scripts/sigil.js'), ...args], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout }));
  });
}

/**
 * A person's decision is evidence: approving or rejecting an escalated authorization records a
 * signed payment_review.v1 naming the reviewer, the note, the amount, the time and the hash of the
 * timeline event it decided. GET …/decision serves it beside the policy's record, and the SDK and
 * `sigil receipt verify` check it offline.
 */
describe('signed human reviews (e2e)', () => {
  let t: TestApp;
  let dir: string;

  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMITS: 'off' });
    dir = mkdtempSync(join(tmpdir(), 'sigil-reviews-'));
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const call = (method: 'GET' | 'POST' | 'PUT', url: string, key: string, payload?: unknown) =>
    t.app.inject({ method, url, ...(payload === undefined ? {} : { payload: payload as object }), headers: { authorization: `Bearer ${key}` } });

  const escalated = async () => {
    const access = t.app.get(AccessService);
    const org = await access.createOrganization('reviews');
    const agent = await access.createApiKey(org.org_id, { scopes: ['payments:write', 'payments:read'], mode: 'test' });
    const reviewer = await access.createApiKey(org.org_id, { scopes: ['approvals:manage', 'payments:read'], mode: 'test' });
    expect((await call('PUT', '/api/cdp/policies/default', agent.key, { limits: { USD: { per_transaction_cents: 50_000, review_above_cents: 20_000 } } })).statusCode).toBe(200);
    const d = (
      await call('POST', '/api/cdp/authorize', agent.key, { amount_cents: 30_000, currency: 'USD', merchant_id: 'm_hotel', purpose_tag: 'travel', expiration_iso: new Date(Date.now() + 3600_000).toISOString() })
    ).json();
    expect(d.decision).toBe('needs_review');
    return { agent, reviewer, d };
  };

  it('a review whose answer a dead process never stored: the retry with its key answers the transaction, with one review recorded', async () => {
    for (const action of ['approve', 'reject'] as const) {
      const { agent, reviewer, d } = await escalated();
      const idem = `review-${randomBytes(6).toString('hex')}`;
      const send = () =>
        t.app.inject({ method: 'POST', url: `/api/cdp/approvals/${d.authorization_id}/${action}`, payload: { note: 'ok' }, headers: { authorization: `Bearer ${reviewer.key}`, 'idempotency-key': idem } });
      const first = await send();
      expect(first.statusCode).toBe(200);
      // What the dead process leaves: the key claimed, no answer, its lease run out.
      expect(await lapseIdempotencyClaim(t.app, idem)).toBe(1);
      const retried = await send();
      expect(retried.statusCode).toBe(200);
      expect(retried.json()).toEqual(first.json());
      const types = (await call('GET', `/api/cdp/transactions/${d.transaction_id}/events`, agent.key)).json().events.map((e: { event_type: string }) => e.event_type);
      expect(types.filter((ty: string) => ty === 'authorization.human_approved' || ty === 'authorization.rejected')).toHaveLength(1);
      // Without its key the same review again is refused, as before.
      const again = await call('POST', `/api/cdp/approvals/${d.authorization_id}/${action}`, reviewer.key, { note: 'ok' });
      expect(again.statusCode).toBe(409);
      expect(again.json().error).toBe('authorization_not_pending');
    }
  });

  it('an approval is a signed review bound to the escalation it decided; the SDK verifies it and catches an edited one', async () => {
    const { agent, reviewer, d } = await escalated();
    expect((await call('POST', `/api/cdp/approvals/${d.authorization_id}/approve`, reviewer.key, { note: 'within travel budget', amount_cents: 25_000 })).statusCode).toBe(200);

    const doc = (await call('GET', `/api/cdp/transactions/${d.transaction_id}/decision`, agent.key)).json();
    expect(doc).toMatchObject({ schema_version: 'payment_decision.v1', payload: { decision: 'needs_review' } });
    expect(doc.reviews).toHaveLength(1);
    const timeline = (await call('GET', `/api/cdp/transactions/${d.transaction_id}/events`, agent.key)).json();
    const escalation = timeline.events.find((e: { event_type: string }) => e.event_type === 'authorization.escalated');
    const [review] = doc.reviews;
    expect(review).toMatchObject({
      schema_version: 'payment_review.v1',
      record_hash: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
      payload: {
        transaction_id: d.transaction_id,
        authorization_id: d.authorization_id,
        review: 'approved',
        reviewer: { actor: `api_key:${reviewer.key_id}`, key_id: reviewer.key_id, name: null },
        note: 'within travel budget',
        requested_amount_cents: 30_000,
        approved_amount_cents: 25_000,
        decided_event_hash: escalation.hash,
        reviewed_at: expect.any(String),
      },
    });

    const keys = (await t.app.inject({ method: 'GET', url: '/.well-known/signing-keys.json' })).json();
    expect(verifyReceipt(doc, keys, { expectedSchema: 'payment_decision.v1' })).toMatchObject({ valid: true });
    expect(verifyReceipt(review, keys, { expectedSchema: 'payment_review.v1' })).toMatchObject({ valid: true, schema_version: 'payment_review.v1' });
    expect(verifyReceipt(review, keys)).toMatchObject({ valid: false, reason: 'unexpected_schema_version' }); // a review is no receipt
    const edited = { ...review, payload: { ...review.payload, approved_amount_cents: 30_000 } };
    expect(verifyReceipt(edited, keys, { expectedSchema: 'payment_review.v1' })).toMatchObject({ valid: false, reason: 'receipt_hash_mismatch' });

    // The same, offline with the CLI: the decision with its review, then one with an edited review.
    writeFileSync(join(dir, 'keys.json'), JSON.stringify(keys));
    writeFileSync(join(dir, 'decision.json'), JSON.stringify(doc));
    writeFileSync(join(dir, 'edited.json'), JSON.stringify({ ...doc, reviews: [edited] }));
    const ok = await sigil(['receipt', 'verify', join(dir, 'decision.json'), '--keys', join(dir, 'keys.json')]);
    expect(ok).toMatchObject({ code: 0, stdout: expect.stringMatching(/review 1: valid: payment_review\.v1/) });
    const bad = await sigil(['receipt', 'verify', join(dir, 'edited.json'), '--keys', join(dir, 'keys.json')]);
    expect(bad).toMatchObject({ code: 1, stdout: expect.stringMatching(/review 1: invalid: receipt_hash_mismatch/) });
    // A bare review (validly signed) is neither a receipt nor a decision; nor is a decision whose reviews list holds a decision.
    writeFileSync(join(dir, 'review.json'), JSON.stringify(review));
    writeFileSync(join(dir, 'nested.json'), JSON.stringify({ ...doc, reviews: [doc] }));
    expect(await sigil(['receipt', 'verify', join(dir, 'review.json'), '--keys', join(dir, 'keys.json')])).toMatchObject({ code: 1, stdout: expect.stringMatching(/^invalid: unexpected_schema_version: payment_review\.v1/) });
    expect(await sigil(['receipt', 'verify', join(dir, 'review.json'), '--schema', 'payment_review.v1', '--keys', join(dir, 'keys.json')])).toMatchObject({ code: 0, stdout: expect.stringMatching(/^valid: payment_review\.v1/) });
    expect(await sigil(['receipt', 'verify', join(dir, 'review.json'), '--schema', 'payment_receipt.v2', '--keys', join(dir, 'keys.json')])).toMatchObject({ code: 2 });
    expect(await sigil(['receipt', 'verify', join(dir, 'nested.json'), '--keys', join(dir, 'keys.json')])).toMatchObject({ code: 1, stdout: expect.stringMatching(/review 1: invalid: unexpected_schema_version/) });
  }, 120_000);

  it('a rejection is signed too, and a decision nobody reviewed has no reviews', async () => {
    const { agent, reviewer, d } = await escalated();
    expect((await call('POST', `/api/cdp/approvals/${d.authorization_id}/reject`, reviewer.key, { note: 'not this hotel' })).statusCode).toBe(200);
    const doc = (await call('GET', `/api/cdp/transactions/${d.transaction_id}/decision`, agent.key)).json();
    expect(doc.reviews.map((r: { payload: { review: string; note: string; approved_amount_cents: number | null } }) => r.payload)).toEqual([
      expect.objectContaining({ review: 'rejected', note: 'not this hotel', approved_amount_cents: null }),
    ]);
    const keys = (await t.app.inject({ method: 'GET', url: '/.well-known/signing-keys.json' })).json();
    expect(verifyReceipt(doc.reviews[0], keys, { expectedSchema: 'payment_review.v1' })).toMatchObject({ valid: true });

    const auto = (
      await call('POST', '/api/cdp/authorize', agent.key, { amount_cents: 1_000, currency: 'USD', merchant_id: 'm_books', purpose_tag: 'software', expiration_iso: new Date(Date.now() + 3600_000).toISOString() })
    ).json();
    expect((await call('GET', `/api/cdp/transactions/${auto.transaction_id}/decision`, agent.key)).json()).toMatchObject({ payload: { decision: 'authorized' }, reviews: [] });
  });

  it('separation of duties: under review.require_distinct_reviewer the requester, and another key of its owner, get 403 reviewer_is_requester', async () => {
    const access = t.app.get(AccessService);
    const org = await access.createOrganization('duties');
    const scopes = ['payments:write', 'payments:read', 'approvals:manage'] as const;
    const requester = await access.createApiKey(org.org_id, { scopes: [...scopes], mode: 'test', owner: 'dana' });
    const danasOther = await access.createApiKey(org.org_id, { scopes: [...scopes], mode: 'test', owner: 'dana' });
    const sam = await access.createApiKey(org.org_id, { scopes: [...scopes], mode: 'test', owner: 'sam' });
    const policy = { limits: { USD: { per_transaction_cents: 50_000, review_above_cents: 20_000 } }, review: { require_distinct_reviewer: true } };
    expect((await call('PUT', '/api/cdp/policies/default', requester.key, policy)).statusCode).toBe(200);
    const d = (
      await call('POST', '/api/cdp/authorize', requester.key, { amount_cents: 30_000, currency: 'USD', merchant_id: 'm_hotel', purpose_tag: 'travel', expiration_iso: new Date(Date.now() + 3600_000).toISOString() })
    ).json();
    expect(d.decision).toBe('needs_review');

    for (const key of [requester.key, danasOther.key]) {
      for (const action of ['approve', 'reject']) {
        const res = await call('POST', `/api/cdp/approvals/${d.authorization_id}/${action}`, key, {});
        expect(res.statusCode).toBe(403);
        expect(res.json()).toMatchObject({ ok: false, error: 'reviewer_is_requester', retryable: false });
      }
    }
    expect((await call('GET', `/api/cdp/transactions/${d.transaction_id}`, requester.key)).json()).toMatchObject({ status: 'needs_review' });
    const approved = await call('POST', `/api/cdp/approvals/${d.authorization_id}/approve`, sam.key, { note: 'second pair of eyes' });
    expect(approved.statusCode).toBe(200);
    const doc = (await call('GET', `/api/cdp/transactions/${d.transaction_id}/decision`, requester.key)).json();
    expect(doc.reviews.map((r: { payload: { reviewer: { key_id: string } } }) => r.payload.reviewer.key_id)).toEqual([sam.key_id]);

    // A review rule the service does not implement is refused by name, never silently ignored.
    const unknown = await call('PUT', '/api/cdp/policies/default', requester.key, { ...policy, review: { require_distinct_reviewer: true, reviewers_from: 'finance' } });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().details).toEqual([expect.objectContaining({ field: 'review.reviewers_from' })]);
  });
});
