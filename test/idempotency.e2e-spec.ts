import { randomBytes } from 'node:crypto';
import { ROUTE_ARGS_METADATA } from '@nestjs/common/constants';
import { ModulesContainer } from '@nestjs/core';
import { AccessService } from '@app/access';
import { IDEMPOTENT, IdempotentCallPipe } from '@app/idempotency';
import { IdempotencyProbeModule, probeRuns } from './support/idempotency-probe.module';
import { startTestApp, TestApp } from './support/test-app';

/** DESIGN.md's idempotency rule over HTTP, through @Idempotent() on a probe route. */
describe('idempotency (e2e)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ TRUST_PROXY: 'true', RATE_LIMITS: 'off' }, [IdempotencyProbeModule]);
  });
  afterAll(() => t?.close());

  const ip = () => `10.${randomBytes(1)[0]}.${randomBytes(1)[0]}.${randomBytes(1)[0]}`;
  const newKey = () => `idem-${randomBytes(8).toString('hex')}`;
  const orgWithKey = async () => {
    const access = t.app.get(AccessService);
    const org = await access.createOrganization(`idem-${randomBytes(3).toString('hex')}`);
    return { orgId: org.org_id, key: (await access.createApiKey(org.org_id, { scopes: ['payments:write'], mode: 'test' })).key };
  };
  const post = (url: string, apiKey: string, payload: string | object, headers: Record<string, string> = {}) =>
    t.app.inject({
      method: 'POST',
      url,
      payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
      headers: { 'content-type': 'application/json', 'x-forwarded-for': ip(), authorization: `Bearer ${apiKey}`, ...headers },
    });

  it('replays the first response for the same key and body, with Idempotent-Replayed: true', async () => {
    const { orgId, key } = await orgWithKey();
    const idem = newKey();
    const first = await post('/__idem/orders', key, { amount_cents: 1000 }, { 'idempotency-key': idem });
    expect(first.statusCode).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const again = await post('/__idem/orders', key, { amount_cents: 1000 }, { 'idempotency-key': idem });
    expect(again.statusCode).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual(first.json());
    expect(probeRuns.get(orgId)).toBe(1);
  });

  it('treats a body with its keys in another order (and other spacing) as the same body', async () => {
    const { orgId, key } = await orgWithKey();
    const idem = newKey();
    const first = await post('/__idem/orders', key, '{"amount_cents":700,"note":"n","tags":["a","b"]}', { 'idempotency-key': idem });
    const again = await post('/__idem/orders', key, '{ "tags": ["a","b"], "note": "n", "amount_cents": 7.0e2 }', { 'idempotency-key': idem });
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual(first.json());
    expect(probeRuns.get(orgId)).toBe(1);
  });

  it('answers 422 idempotency_key_reused for the same key with another body or on another route', async () => {
    const { key } = await orgWithKey();
    const idem = newKey();
    await post('/__idem/orders', key, { amount_cents: 1000 }, { 'idempotency-key': idem });
    const other = await post('/__idem/orders', key, { amount_cents: 1001 }, { 'idempotency-key': idem });
    expect(other.statusCode).toBe(422);
    expect(other.json()).toMatchObject({ ok: false, error: 'idempotency_key_reused', retryable: false });
    const elsewhere = await post('/__idem/optional', key, { amount_cents: 1000 }, { 'idempotency-key': idem });
    expect(elsewhere.statusCode).toBe(422);
    expect(elsewhere.json()).toMatchObject({ ok: false, error: 'idempotency_key_reused' });
  });

  it('creates one order for 50 parallel requests with one key, and every response is that order', async () => {
    const { orgId, key } = await orgWithKey();
    const idem = newKey();
    const responses = await Promise.all(Array.from({ length: 50 }, () => post('/__idem/orders', key, { amount_cents: 2500 }, { 'idempotency-key': idem })));
    expect(responses.map((r) => r.statusCode)).toEqual(Array(50).fill(201));
    expect(new Set(responses.map((r) => r.json().order_id)).size).toBe(1);
    expect(responses.filter((r) => r.headers['idempotent-replayed'] !== 'true')).toHaveLength(1);
    expect(probeRuns.get(orgId)).toBe(1);
  });

  it('scopes keys to the organization', async () => {
    const a = await orgWithKey();
    const b = await orgWithKey();
    const idem = newKey();
    const fromA = await post('/__idem/orders', a.key, { amount_cents: 1000 }, { 'idempotency-key': idem });
    const fromB = await post('/__idem/orders', b.key, { amount_cents: 1000 }, { 'idempotency-key': idem });
    expect(fromB.statusCode).toBe(201);
    expect(fromB.headers['idempotent-replayed']).toBeUndefined();
    expect(fromB.json().order_id).not.toBe(fromA.json().order_id);
  });

  it('binds a key to the API key that first used it: another key of the organization gets 422 idempotency_key_reused, never its response', async () => {
    const { orgId, key } = await orgWithKey();
    const other = (await t.app.get(AccessService).createApiKey(orgId, { scopes: ['payments:write'], mode: 'test' })).key;
    const idem = newKey();
    // While the first request still runs, the other key is refused at once (no wait, no replay).
    const running = post('/__idem/orders', key, { amount_cents: 1000 }, { 'idempotency-key': idem });
    await new Promise((r) => setTimeout(r, 30));
    const during = await post('/__idem/orders', other, { amount_cents: 1000 }, { 'idempotency-key': idem });
    const first = await running;
    expect(first.statusCode).toBe(201);
    const after = await post('/__idem/orders', other, { amount_cents: 1000 }, { 'idempotency-key': idem });
    for (const refused of [during, after]) {
      expect(refused.statusCode).toBe(422);
      expect(refused.json()).toEqual({ ok: false, error: 'idempotency_key_reused', message: expect.stringMatching(/another caller/), retryable: false });
      expect(refused.headers['idempotent-replayed']).toBeUndefined();
      expect(refused.payload).not.toContain(first.json().order_id);
    }
    expect(probeRuns.get(orgId)).toBe(1);
    // The key's own caller still gets its response, byte for byte.
    const again = await post('/__idem/orders', key, { amount_cents: 1000 }, { 'idempotency-key': idem });
    expect(again.statusCode).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.payload).toBe(first.payload);
    expect(probeRuns.get(orgId)).toBe(1);
  });

  describe('on the commerce routes', () => {
    const call = (method: 'GET' | 'POST' | 'PUT', url: string, apiKey: string, payload?: object, headers: Record<string, string> = {}) =>
      t.app.inject({ method, url, ...(payload === undefined ? {} : { payload }), headers: { 'x-forwarded-for': ip(), authorization: `Bearer ${apiKey}`, ...headers } });
    const request = () => ({ amount_cents: 30_000, currency: 'USD', merchant_id: 'm_hotel', purpose_tag: 'travel', expiration_iso: new Date(Date.now() + 3600_000).toISOString() });
    /** An organization whose policy escalates 300.00: two agent keys of one integrator, and reviewers sam and lee (their own keys). */
    const commerceOrg = async (review: Record<string, unknown> = {}) => {
      const access = t.app.get(AccessService);
      const o = await access.createOrganization(`idem-callers-${randomBytes(3).toString('hex')}`);
      const key = (scopes: string[], owner: string) => access.createApiKey(o.org_id, { scopes: scopes as never, mode: 'test', owner });
      const agentScopes = ['payments:write', 'payments:read'];
      const [agent, agent2, sam, lee] = [await key(agentScopes, 'integrator'), await key(agentScopes, 'integrator'), await key(['approvals:manage', 'payments:read'], 'sam'), await key(['approvals:manage', 'payments:read'], 'lee')];
      const policy = { limits: { USD: { per_transaction_cents: 50_000, review_above_cents: 20_000 } }, review };
      expect((await call('PUT', '/api/cdp/policies/default', agent.key, policy)).statusCode).toBe(200);
      const escalate = async () => {
        const d = (await call('POST', '/api/cdp/authorize', agent.key, request())).json();
        expect(d.decision).toBe('needs_review');
        return d as { transaction_id: string; authorization_id: string };
      };
      const reviews = async (txn: string) =>
        ((await call('GET', `/api/cdp/transactions/${txn}/decision`, agent.key)).json().reviews as { payload: { review: string; reviewer: { key_id: string } } }[]).map((r) => `${r.payload.review} by ${r.payload.reviewer.key_id}`);
      const types = async (txn: string) =>
        ((await call('GET', `/api/cdp/transactions/${txn}/events`, agent.key)).json().events as { event_type: string }[]).map((e) => e.event_type).filter((x) => x.startsWith('authorization.'));
      return { agent, agent2, sam, lee, escalate, reviews, types };
    };

    it("a second reviewer sending the first one's Idempotency-Key is 422 idempotency_key_reused: the first review is not replayed to them, nor recorded twice", async () => {
      const o = await commerceOrg({ approvals_required: 2 });
      const d = await o.escalate();
      const idem = newKey();
      const url = `/api/cdp/approvals/${d.authorization_id}/approve`;
      const sams = await call('POST', url, o.sam.key, { note: 'fine' }, { 'idempotency-key': idem });
      expect(sams.statusCode).toBe(200);
      expect(sams.json()).toMatchObject({ status: 'needs_review' });

      const lees = await call('POST', url, o.lee.key, { note: 'fine' }, { 'idempotency-key': idem });
      expect(lees.statusCode).toBe(422);
      expect(lees.json()).toMatchObject({ ok: false, error: 'idempotency_key_reused', retryable: false });
      expect(lees.headers['idempotent-replayed']).toBeUndefined();
      expect(await o.types(d.transaction_id)).toEqual(['authorization.requested', 'authorization.escalated', 'authorization.approval_recorded']);
      expect(await o.reviews(d.transaction_id)).toEqual([`approved by ${o.sam.key_id}`]);

      // Sam's retry is the replay it always was, byte for byte, and records nothing more.
      const samAgain = await call('POST', url, o.sam.key, { note: 'fine' }, { 'idempotency-key': idem });
      expect(samAgain.statusCode).toBe(200);
      expect(samAgain.headers['idempotent-replayed']).toBe('true');
      expect(samAgain.payload).toBe(sams.payload);
      expect(await o.reviews(d.transaction_id)).toEqual([`approved by ${o.sam.key_id}`]);

      // Lee's own key records Lee's approval: the second one, which authorizes it.
      const leeOwn = await call('POST', url, o.lee.key, { note: 'fine' }, { 'idempotency-key': newKey() });
      expect(leeOwn.json()).toMatchObject({ status: 'authorized' });
      expect(await o.reviews(d.transaction_id)).toEqual([`approved by ${o.sam.key_id}`, `approved by ${o.lee.key_id}`]);
    });

    it("a second reviewer's rejection with the first one's key is refused, not answered with the first one's signed rejection", async () => {
      const o = await commerceOrg();
      const d = await o.escalate();
      const idem = newKey();
      const url = `/api/cdp/approvals/${d.authorization_id}/reject`;
      const sams = await call('POST', url, o.sam.key, { note: 'no' }, { 'idempotency-key': idem });
      expect(sams.json()).toMatchObject({ status: 'rejected' });
      const lees = await call('POST', url, o.lee.key, { note: 'no' }, { 'idempotency-key': idem });
      expect(lees.statusCode).toBe(422);
      expect(lees.json()).toMatchObject({ error: 'idempotency_key_reused' });
      expect(await o.reviews(d.transaction_id)).toEqual([`rejected by ${o.sam.key_id}`]);
      const samAgain = await call('POST', url, o.sam.key, { note: 'no' }, { 'idempotency-key': idem });
      expect([samAgain.statusCode, samAgain.headers['idempotent-replayed'], samAgain.payload]).toEqual([200, 'true', sams.payload]);
    });

    it('API keys do not share keys either, even two of one integrator: the other key is 422 and no second payment is authorized', async () => {
      const o = await commerceOrg();
      const idem = newKey();
      const body = request();
      const first = await call('POST', '/api/cdp/authorize', o.agent.key, body, { 'idempotency-key': idem });
      expect(first.json()).toMatchObject({ decision: 'needs_review' });
      const other = await call('POST', '/api/cdp/authorize', o.agent2.key, body, { 'idempotency-key': idem });
      expect(other.statusCode).toBe(422);
      expect(other.json()).toMatchObject({ error: 'idempotency_key_reused' });
      const again = await call('POST', '/api/cdp/authorize', o.agent.key, body, { 'idempotency-key': idem });
      expect([again.statusCode, again.headers['idempotent-replayed'], again.payload]).toEqual([first.statusCode, 'true', first.payload]);
      const listed = (await call('GET', '/api/cdp/transactions', o.agent.key)).json().items as { transaction_id: string }[];
      expect(listed.map((x) => x.transaction_id)).toEqual([first.json().transaction_id]);
    });
  });

  it('requires the key where the route says so, and refuses a malformed one', async () => {
    const { orgId, key } = await orgWithKey();
    const missing = await post('/__idem/orders', key, { amount_cents: 1000 });
    expect(missing.statusCode).toBe(400);
    expect(missing.json()).toMatchObject({ ok: false, error: 'idempotency_key_required' });
    for (const bad of ['x'.repeat(256), '']) {
      const res = await post('/__idem/orders', key, { amount_cents: 1000 }, { 'idempotency-key': bad });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ ok: false, error: 'invalid_idempotency_key' });
    }
    expect(probeRuns.get(orgId)).toBeUndefined();
    // Optional: without a key every request runs; with one it replays.
    const one = await post('/__idem/optional', key, {});
    const two = await post('/__idem/optional', key, {});
    expect(one.json().id).not.toBe(two.json().id);
    const idem = newKey();
    const first = await post('/__idem/optional', key, {}, { 'idempotency-key': idem });
    const replay = await post('/__idem/optional', key, {}, { 'idempotency-key': idem });
    expect([first.statusCode, replay.statusCode]).toEqual([200, 200]);
    expect(replay.json().id).toBe(first.json().id);
    expect(replay.headers['idempotent-replayed']).toBe('true');
  });

  it('does not store a 500 or a validation failure, so the same key can be retried', async () => {
    const { orgId, key } = await orgWithKey();
    const idem = newKey();
    const failed = await post('/__idem/orders', key, { amount_cents: 500 }, { 'idempotency-key': idem });
    expect(failed.statusCode).toBe(500);
    const retried = await post('/__idem/orders', key, { amount_cents: 500 }, { 'idempotency-key': idem });
    expect(retried.statusCode).toBe(500);
    expect(retried.headers['idempotent-replayed']).toBeUndefined();
    expect(probeRuns.get(orgId)).toBe(2);

    const other = newKey();
    const invalid = await post('/__idem/orders', key, { amount_cents: -1 }, { 'idempotency-key': other });
    expect(invalid.statusCode).toBe(400);
    expect(invalid.json()).toMatchObject({ error: 'validation_failed' });
    const fixed = await post('/__idem/orders', key, { amount_cents: 1 }, { 'idempotency-key': other });
    expect(fixed.statusCode).toBe(201);
  });

  it('stores a domain refusal and replays it as the same error envelope', async () => {
    const { orgId, key } = await orgWithKey();
    const idem = newKey();
    const first = await post('/__idem/orders', key, { amount_cents: 404 }, { 'idempotency-key': idem });
    const again = await post('/__idem/orders', key, { amount_cents: 404 }, { 'idempotency-key': idem });
    expect([first.statusCode, again.statusCode]).toEqual([404, 404]);
    expect(again.json()).toEqual(first.json());
    expect(again.json()).toEqual({ ok: false, error: 'not_found', message: 'No such merchant', retryable: false });
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(probeRuns.get(orgId)).toBe(1);
  });

  it('runs every @Idempotent() route of the app through its IdempotentCall, so none of them forgets the rule', () => {
    const marked: string[] = [];
    const wired: string[] = [];
    for (const module of t.app.get(ModulesContainer).values()) {
      for (const wrapper of module.controllers.values()) {
        const type = wrapper.metatype as (new (...args: unknown[]) => object) | null;
        if (!type) continue;
        for (const name of Object.getOwnPropertyNames(type.prototype)) {
          const method = Object.getOwnPropertyDescriptor(type.prototype, name)?.value as unknown;
          if (typeof method !== 'function' || !Reflect.getMetadata(IDEMPOTENT, method)) continue;
          marked.push(`${type.name}.${name}`);
          const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, type, name) ?? {}) as Record<string, { pipes?: unknown[] }>;
          if (Object.values(args).some((a) => a.pipes?.includes(IdempotentCallPipe))) wired.push(`${type.name}.${name}`);
        }
      }
    }
    // The commerce, webhook and credits routes, and the probe's two.
    expect(marked.length).toBeGreaterThanOrEqual(11);
    expect(wired.sort()).toEqual(marked.sort());
  });
});
