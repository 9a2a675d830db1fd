import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AccessService } from '@app/access';
import { verifyReceipt, verifyTimeline } from '@app/sdk';
import type { TestApp } from './support/test-app';
import { startWebhookApp } from './support/webhook-app';
import { eventually, WebhookReceiver } from './support/webhook-receiver';

const ROOT = join(__dirname, '..');

/** `node scripts/sigil.js …` (what `npx sigil` runs), offline. */
function sigil(args: string[]): Promise<{ code: number | null; stdout: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(ROOT, 'scripts/sigil.js'), ...args], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout }));
  });
}

type Entry = { event_type: string; status: string; entered: string[]; hash: string; metadata: Record<string, unknown> };

/**
 * `review.approvals_required: 2`: an escalated authorization needs the approvals of two different
 * reviewers (different keys, different owners). The first is a signed review recorded as
 * authorization.approval_recorded (still needs_review, no webhook: no state changed); the second
 * is authorization.human_approved, at the lower of the two amounts. Any rejection rejects, the
 * same reviewer cannot approve twice, and racing approvals give one outcome.
 */
describe('two required approvals (e2e)', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  let close: () => Promise<void>;
  let dir: string;

  beforeAll(async () => {
    ({ t, receiver, close } = await startWebhookApp());
    dir = mkdtempSync(join(tmpdir(), 'sigil-two-approvals-'));
  }, 60_000);
  afterAll(async () => {
    await close?.();
    rmSync(dir, { recursive: true, force: true });
  });

  const call = (method: 'GET' | 'POST' | 'PUT', url: string, key: string, payload?: unknown) =>
    t.app.inject({ method, url, ...(payload === undefined ? {} : { payload: payload as object }), headers: { authorization: `Bearer ${key}` } });
  const approve = (key: string, auth: string, body: Record<string, unknown> = {}) => call('POST', `/api/cdp/approvals/${auth}/approve`, key, body);
  const request = (over: Record<string, unknown> = {}) => ({
    amount_cents: 30_000,
    currency: 'USD',
    merchant_id: 'm_hotel',
    purpose_tag: 'travel',
    expiration_iso: new Date(Date.now() + 3600_000).toISOString(),
    ...over,
  });
  const twoApprovals = { limits: { USD: { per_transaction_cents: 50_000, review_above_cents: 20_000 } }, spend_caps: [{ window: 'daily', currency: 'USD', amount_cents: 100_000 }], review: { approvals_required: 2 } };

  /** An organization whose policy requires two approvals: the agent (owner dana), sam (two keys) and lee. */
  const org = async (name: string, review: Record<string, unknown> = {}) => {
    const access = t.app.get(AccessService);
    const o = await access.createOrganization(name);
    const scopes = ['payments:write', 'payments:read', 'approvals:manage', 'webhooks:manage'] as const;
    const key = (owner: string) => access.createApiKey(o.org_id, { scopes: [...scopes], mode: 'test', owner });
    const [agent, sam, samsOther, lee, kim] = [await key('dana'), await key('sam'), await key('sam'), await key('lee'), await key('kim')];
    // A key manager without an owner (made by the operator), who mints keys over HTTP.
    const manager = await access.createApiKey(o.org_id, { scopes: [...scopes, 'keys:manage'], mode: 'test', createdBy: 'operator' });
    const put = await call('PUT', '/api/cdp/policies/default', agent.key, { ...twoApprovals, review: { ...twoApprovals.review, ...review } });
    expect(put.statusCode).toBe(200);
    const escalate = async () => {
      const d = (await call('POST', '/api/cdp/authorize', agent.key, request())).json();
      expect(d.decision).toBe('needs_review');
      return d as { transaction_id: string; authorization_id: string };
    };
    const timeline = async (txn: string) => (await call('GET', `/api/cdp/transactions/${txn}/events`, agent.key)).json() as { events: Entry[] };
    const types = async (txn: string) => (await timeline(txn)).events.map((e) => e.event_type).filter((x) => x.startsWith('authorization.'));
    return { orgId: o.org_id, agent, sam, samsOther, lee, kim, manager, escalate, timeline, types };
  };

  it('the policy field is 1 or 2 (400 naming it otherwise) and reads back from GET, versions, simulate and quote', async () => {
    const access = t.app.get(AccessService);
    const o = await access.createOrganization('two-approvals-policy');
    const { key } = await access.createApiKey(o.org_id, { scopes: ['payments:write', 'payments:read'], mode: 'test' });
    for (const bad of [0, 3, -1, 1.5, '2', null, true, [2], { n: 2 }]) {
      const res = await call('PUT', '/api/cdp/policies/default', key, { review: { approvals_required: bad } });
      expect([bad, res.statusCode]).toEqual([bad, 400]);
      expect(res.json()).toMatchObject({ ok: false, error: 'invalid_policy', details: [{ field: 'review.approvals_required', message: expect.stringMatching(/must be 1 or 2/) }] });
    }
    const put = await call('PUT', '/api/cdp/policies/default', key, twoApprovals);
    expect(put.statusCode).toBe(200);
    expect((await call('GET', '/api/cdp/policies/default', key)).json()).toMatchObject({ policy: { review: { approvals_required: 2 } } });
    expect((await call('GET', '/api/cdp/policies/default/versions/1', key)).json()).toMatchObject({ version: 1, policy: { review: { approvals_required: 2 } } });
    expect((await call('GET', '/api/cdp/policies/default/versions', key)).statusCode).toBe(200);
    expect((await call('POST', '/api/cdp/policies/default/simulate', key, request())).json()).toMatchObject({ decision: 'needs_review' });
    expect((await call('POST', '/api/cdp/quote', key, request())).json()).toMatchObject({ decision: 'needs_review' });
    expect((await call('PUT', '/api/cdp/policies/default', key, { ...twoApprovals, review: { approvals_required: 1 } })).statusCode).toBe(200);
  });

  it('two different reviewers authorize it, at the lower amount; each review is signed, and the SDK and the CLI verify both', async () => {
    const o = await org('two-approvals');
    const route = receiver.route('two-approvals');
    expect((await call('POST', '/api/cdp/webhooks/endpoints', o.agent.key, { url: route.url })).statusCode).toBe(201);
    const d = await o.escalate();

    const first = await approve(o.sam.key, d.authorization_id, { note: 'fine by me', amount_cents: 25_000 });
    expect(first.statusCode).toBe(200);
    expect(first.json()).toMatchObject({ status: 'needs_review', decision: 'needs_review', approved_amount_cents: null });
    expect((await call('GET', '/api/cdp/approvals', o.sam.key)).json().items.map((i: { transaction_id: string }) => i.transaction_id)).toContain(d.transaction_id);

    const second = await approve(o.lee.key, d.authorization_id, { note: 'agreed', amount_cents: 28_000 });
    expect(second.statusCode).toBe(200);
    expect(second.json()).toMatchObject({ status: 'authorized', decision: 'authorized', approved_amount_cents: 25_000 });

    const timeline = await o.timeline(d.transaction_id);
    expect(await o.types(d.transaction_id)).toEqual(['authorization.requested', 'authorization.escalated', 'authorization.approval_recorded', 'authorization.human_approved']);
    const [, escalation, recorded, approved] = timeline.events;
    expect(recorded).toMatchObject({ status: 'needs_review', entered: [], metadata: { approver: `api_key:${o.sam.key_id}`, amount_cents: 25_000, approval: 1, approvals_required: 2 } });
    expect(approved).toMatchObject({ status: 'authorized', entered: ['authorized'], metadata: { amount_cents: 25_000, approvers: [`api_key:${o.sam.key_id}`, `api_key:${o.lee.key_id}`] } });
    expect(verifyTimeline(timeline)).toMatchObject({ valid: true });

    const doc = (await call('GET', `/api/cdp/transactions/${d.transaction_id}/decision`, o.agent.key)).json();
    expect(doc.reviews.map((r: { payload: Record<string, unknown> }) => r.payload)).toEqual([
      expect.objectContaining({ review: 'approved', reviewer: expect.objectContaining({ key_id: o.sam.key_id }), approved_amount_cents: 25_000, approval: 1, approvals_required: 2, decided_event_hash: escalation.hash }),
      expect.objectContaining({ review: 'approved', reviewer: expect.objectContaining({ key_id: o.lee.key_id }), approved_amount_cents: 28_000, approval: 2, approvals_required: 2, decided_event_hash: recorded.hash }),
    ]);
    const keys = (await t.app.inject({ method: 'GET', url: '/.well-known/signing-keys.json' })).json();
    expect(verifyReceipt(doc, keys, { expectedSchema: 'payment_decision.v1' })).toMatchObject({ valid: true });
    expect(verifyReceipt(doc, keys)).toMatchObject({ valid: false, reason: 'unexpected_schema_version' }); // a decision is no receipt
    for (const review of doc.reviews) expect(verifyReceipt(review, keys, { expectedSchema: 'payment_review.v1' })).toMatchObject({ valid: true, schema_version: 'payment_review.v1' });
    writeFileSync(join(dir, 'keys.json'), JSON.stringify(keys));
    writeFileSync(join(dir, 'decision.json'), JSON.stringify(doc));
    const edited = { ...doc, reviews: [doc.reviews[0], { ...doc.reviews[1], payload: { ...doc.reviews[1].payload, approved_amount_cents: 30_000 } }] };
    writeFileSync(join(dir, 'edited.json'), JSON.stringify(edited));
    const ok = await sigil(['receipt', 'verify', join(dir, 'decision.json'), '--keys', join(dir, 'keys.json')]);
    expect(ok).toMatchObject({ code: 0, stdout: expect.stringMatching(/review 1: valid[\s\S]*review 2: valid/) });
    const bad = await sigil(['receipt', 'verify', join(dir, 'edited.json'), '--keys', join(dir, 'keys.json')]);
    expect(bad).toMatchObject({ code: 1, stdout: expect.stringMatching(/review 1: valid[\s\S]*review 2: invalid: receipt_hash_mismatch/) });

    // Webhooks announce state changes only: the first approval changed none, so it is not delivered.
    const delivered = await eventually(
      () => {
        const types = receiver.on(route.path).map((r) => JSON.parse(r.body)).filter((b) => b.transaction_id === d.transaction_id).map((b) => b.event_type);
        return types.includes('authorization.human_approved') ? types : undefined;
      },
      30_000,
      'the human_approved delivery',
    );
    expect([...delivered].sort()).toEqual(['authorization.escalated', 'authorization.human_approved', 'authorization.requested']);
  }, 120_000);

  it('the same reviewer again, by the same key or another key of the same owner, is 409 reviewer_already_approved', async () => {
    const o = await org('two-approvals-same');
    const d = await o.escalate();
    expect((await approve(o.sam.key, d.authorization_id)).statusCode).toBe(200);
    for (const key of [o.sam.key, o.samsOther.key]) {
      const again = await approve(key, d.authorization_id, { note: 'me again' });
      expect(again.statusCode).toBe(409);
      expect(again.json()).toMatchObject({ ok: false, error: 'reviewer_already_approved', retryable: false, details: { approvals_required: 2, approvals_recorded: 1 } });
    }
    expect((await call('GET', `/api/cdp/transactions/${d.transaction_id}`, o.agent.key)).json()).toMatchObject({ status: 'needs_review' });
    expect(await o.types(d.transaction_id)).toEqual(['authorization.requested', 'authorization.escalated', 'authorization.approval_recorded']);
    expect((await approve(o.lee.key, d.authorization_id)).json()).toMatchObject({ status: 'authorized' });
  });

  it('with require_distinct_reviewer the requester may not give the second approval (403 reviewer_is_requester)', async () => {
    const o = await org('two-approvals-duties', { require_distinct_reviewer: true });
    const d = await o.escalate();
    expect((await approve(o.sam.key, d.authorization_id)).statusCode).toBe(200);
    const requester = await approve(o.agent.key, d.authorization_id);
    expect(requester.statusCode).toBe(403);
    expect(requester.json()).toMatchObject({ error: 'reviewer_is_requester' });
    expect((await call('GET', `/api/cdp/transactions/${d.transaction_id}`, o.agent.key)).json()).toMatchObject({ status: 'needs_review' });
    expect((await approve(o.lee.key, d.authorization_id)).json()).toMatchObject({ status: 'authorized' });
  });

  it('without require_distinct_reviewer too, the requester gives neither approval (403 reviewer_is_requester)', async () => {
    const o = await org('two-approvals-requester');
    const d = await o.escalate();
    for (const first of [true, false]) {
      const requester = await approve(o.agent.key, d.authorization_id);
      expect(requester.statusCode).toBe(403);
      expect(requester.json()).toMatchObject({ error: 'reviewer_is_requester' });
      if (first) expect((await approve(o.sam.key, d.authorization_id)).statusCode).toBe(200);
    }
    expect(await o.types(d.transaction_id)).toEqual(['authorization.requested', 'authorization.escalated', 'authorization.approval_recorded']);
    expect((await approve(o.lee.key, d.authorization_id)).json()).toMatchObject({ status: 'authorized' });
  });

  it('a key minted over HTTP (created_by) and the key that minted it are one reviewer: 409 reviewer_already_approved', async () => {
    const o = await org('two-approvals-minted');
    const minted = await call('POST', '/api/keys', o.manager.key, { scopes: ['approvals:manage', 'payments:read'], mode: 'test', name: 'second laptop' });
    expect(minted.statusCode).toBe(201);
    const grandchild = await call('POST', '/api/keys', minted.json().key, { scopes: ['approvals:manage'], mode: 'test' });
    expect(grandchild.statusCode).toBe(403); // the minted key holds no keys:manage
    const d = await o.escalate();
    expect((await approve(o.manager.key, d.authorization_id)).statusCode).toBe(200);
    const again = await approve(minted.json().key, d.authorization_id);
    expect(again.statusCode).toBe(409);
    expect(again.json()).toMatchObject({ error: 'reviewer_already_approved' });
    // The other way round: the minted key first, its creator second.
    const e = await o.escalate();
    expect((await approve(minted.json().key, e.authorization_id)).statusCode).toBe(200);
    expect((await approve(o.manager.key, e.authorization_id)).json()).toMatchObject({ error: 'reviewer_already_approved' });
    expect((await approve(o.lee.key, e.authorization_id)).json()).toMatchObject({ status: 'authorized' });
  });

  it('a rejection after one approval rejects and releases the whole reservation', async () => {
    const o = await org('two-approvals-reject');
    const d = await o.escalate();
    expect((await approve(o.sam.key, d.authorization_id, { amount_cents: 10_000 })).statusCode).toBe(200);
    const rejected = await call('POST', `/api/cdp/approvals/${d.authorization_id}/reject`, o.lee.key, { note: 'no' });
    expect(rejected.statusCode).toBe(200);
    expect(rejected.json()).toMatchObject({ status: 'rejected', decision: 'blocked', reason_code: 'REJECTED_BY_REVIEWER' });
    const doc = (await call('GET', `/api/cdp/transactions/${d.transaction_id}/decision`, o.agent.key)).json();
    expect(doc.reviews.map((r: { payload: { review: string } }) => r.payload.review)).toEqual(['approved', 'rejected']);
    expect((await approve(o.lee.key, d.authorization_id)).json()).toMatchObject({ error: 'authorization_not_pending', details: { status: 'rejected' } });
    // The 300.00 it held is free again: three more escalations fit the 1000.00 cap.
    for (let i = 0; i < 3; i++) await o.escalate();
  });

  it('racing approvals give one outcome: two reviewers authorize it once; the same one twice records one approval', async () => {
    const o = await org('two-approvals-race');
    const d = await o.escalate();
    const raced = await Promise.all([approve(o.sam.key, d.authorization_id), approve(o.lee.key, d.authorization_id)]);
    expect(raced.map((r) => r.statusCode)).toEqual([200, 200]);
    expect(raced.map((r) => r.json().status).sort()).toEqual(['authorized', 'needs_review']);
    expect(await o.types(d.transaction_id)).toEqual(['authorization.requested', 'authorization.escalated', 'authorization.approval_recorded', 'authorization.human_approved']);

    const e = await o.escalate();
    const twice = await Promise.all([approve(o.sam.key, e.authorization_id), approve(o.samsOther.key, e.authorization_id)]);
    expect(twice.map((r) => r.statusCode).sort()).toEqual([200, 409]);
    expect(twice.find((r) => r.statusCode === 409)!.json()).toMatchObject({ error: 'reviewer_already_approved' });
    expect(await o.types(e.transaction_id)).toEqual(['authorization.requested', 'authorization.escalated', 'authorization.approval_recorded']);

    const f = await o.escalate();
    const three = await Promise.all([approve(o.sam.key, f.authorization_id), approve(o.lee.key, f.authorization_id), approve(o.kim.key, f.authorization_id)]);
    expect(three.map((r) => r.statusCode).sort()).toEqual([200, 200, 409]);
    expect(three.find((r) => r.statusCode === 409)!.json()).toMatchObject({ error: 'authorization_not_pending', details: { status: 'authorized' } });
    expect((await o.types(f.transaction_id)).filter((x) => x === 'authorization.human_approved')).toHaveLength(1);
  });
});
