import { randomBytes } from 'node:crypto';
import { AccessService } from '@app/access';
import { EventStore } from '@app/event-store';
import { startTestApp, TestApp } from './support/test-app';

/** Key creation and revocation over HTTP for keys:manage (embedded, and PostgreSQL/Redis in the second pass). */
describe('keys API (e2e)', () => {
  let t: TestApp;
  let access: AccessService;

  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMITS: 'off' });
    access = t.app.get(AccessService);
  }, 60_000);
  afterAll(async () => {
    await t?.close();
  });

  const call = async (method: 'GET' | 'POST' | 'DELETE', url: string, key: string, payload?: unknown) => {
    const res = await t.app.inject({ method, url, ...(payload === undefined ? {} : { payload: payload as object }), headers: { authorization: `Bearer ${key}` } });
    return { status: res.statusCode, body: res.json() as Record<string, unknown> };
  };
  const org = async () => {
    const o = await access.createOrganization(`keys-${randomBytes(3).toString('hex')}`);
    const manager = await access.createApiKey(o.org_id, { scopes: ['keys:manage', 'payments:read', 'payments:write'], mode: 'test' });
    return { orgId: o.org_id, manager: manager.key };
  };

  it('creates a key shown once, which works at once; revoking it refuses it at once', async () => {
    const a = await org();
    const created = await call('POST', '/api/keys', a.manager, { scopes: ['payments:read'], mode: 'test', name: 'reporting', owner: 'Dana' });
    expect(created).toMatchObject({ status: 201, body: { key_id: expect.stringMatching(/^key_[0-9a-f]{16}$/), key: expect.stringMatching(/^cdp_test_[0-9a-f]{64}$/), org_id: a.orgId, scopes: ['payments:read'], mode: 'test', name: 'reporting', owner: 'Dana', expires_at: null } });
    const key = created.body.key as string;
    expect(await call('GET', '/api/me', key)).toMatchObject({ status: 200, body: { key_id: created.body.key_id, scopes: ['payments:read'], mode: 'test' } });
    const listed = await call('GET', '/api/keys', a.manager);
    expect(JSON.stringify(listed.body)).not.toContain(key.slice(9));

    expect(await call('DELETE', `/api/keys/${created.body.key_id}`, a.manager)).toMatchObject({ status: 200, body: { key_id: created.body.key_id, status: 'revoked' } });
    expect(await call('GET', '/api/me', key)).toMatchObject({ status: 401, body: { error: 'auth_required' } });
    expect(await call('DELETE', `/api/keys/${created.body.key_id}`, a.manager)).toMatchObject({ status: 200, body: { status: 'revoked' } });
  });

  it('refuses scopes beyond the creator\u2019s, bad input, another organization\u2019s key, and callers without keys:manage', async () => {
    const a = await org();
    const b = await org();
    expect(await call('POST', '/api/keys', a.manager, { scopes: ['approvals:manage'], mode: 'test' })).toMatchObject({ status: 403, body: { error: 'insufficient_scope', details: { missing_scopes: ['approvals:manage'] } } });
    for (const bad of [
      { scopes: [], mode: 'test' },
      { scopes: ['payments:read'], mode: 'prod' },
      { scopes: ['payments:steal'], mode: 'test' },
      { scopes: ['payments:read'] },
      { scopes: ['payments:read'], mode: 'test', extra: true },
      { scopes: ['payments:read'], mode: 'test', expires_at: '2020-01-01T00:00:00Z' },
      { scopes: ['payments:read'], mode: 'test', name: '' },
    ]) {
      expect(await call('POST', '/api/keys', a.manager, bad)).toMatchObject({ status: 400, body: { error: 'validation_failed' } });
    }
    const own = (await call('POST', '/api/keys', a.manager, { scopes: ['payments:read'], mode: 'test', expires_at: new Date(Date.now() + 86_400_000).toISOString() })).body;
    expect(own.expires_at).toEqual(expect.any(String));
    expect(await call('DELETE', `/api/keys/${own.key_id}`, b.manager)).toMatchObject({ status: 404, body: { error: 'not_found' } });
    expect(await call('DELETE', '/api/keys/key_0000000000000000', a.manager)).toMatchObject({ status: 404 });
    expect(await call('DELETE', '/api/keys/nope', a.manager)).toMatchObject({ status: 400, body: { error: 'validation_failed' } });
    const reader = own.key as string;
    expect(await call('POST', '/api/keys', reader, { scopes: ['payments:read'], mode: 'test' })).toMatchObject({ status: 403, body: { error: 'insufficient_scope' } });
    expect(await call('DELETE', `/api/keys/${own.key_id}`, reader)).toMatchObject({ status: 403 });
  });

  it('a new key keeps its creator\u2019s mode and expiry bound (refused, not changed), and records who created it', async () => {
    const a = await org();
    const me = (await call('GET', '/api/me', a.manager)).body;
    expect(await call('POST', '/api/keys', a.manager, { scopes: ['payments:read'], mode: 'live' })).toMatchObject({ status: 403, body: { error: 'key_mode_mismatch', details: { creator_mode: 'test', requested_mode: 'live' } } });
    const soon = new Date(Date.now() + 3_600_000);
    const expiring = await access.createApiKey(a.orgId, { scopes: ['keys:manage', 'payments:read'], mode: 'test', expiresAt: soon });
    for (const expires_at of [undefined, new Date(soon.getTime() + 1000).toISOString()]) {
      const res = await call('POST', '/api/keys', expiring.key, { scopes: ['payments:read'], mode: 'test', ...(expires_at ? { expires_at } : {}) });
      expect(res).toMatchObject({ status: 400, body: { error: 'key_expiry_beyond_creator', details: { creator_expires_at: soon.toISOString() } } });
    }
    const child = await call('POST', '/api/keys', expiring.key, { scopes: ['payments:read'], mode: 'test', expires_at: soon.toISOString() });
    expect(child).toMatchObject({ status: 201, body: { expires_at: soon.toISOString() } });
    const listed = (await call('GET', '/api/keys', a.manager)).body.keys as { key_id: string; created_by: string | null }[];
    expect(listed.find((k) => k.key_id === child.body.key_id)).toMatchObject({ created_by: expiring.key_id });
    expect(listed.find((k) => k.key_id === me.key_id)).toMatchObject({ created_by: null });
  });

  it('caps an organization\u2019s active keys at MAX_ACTIVE_API_KEYS (409 api_key_limit_reached); a revoked key frees a place', async () => {
    const a = await org();
    const max = 100;
    const made: string[] = [];
    for (let i = 1; i < max; i++) made.push((await access.createApiKey(a.orgId, { scopes: ['payments:read'], mode: 'test' })).key_id);
    expect(await call('POST', '/api/keys', a.manager, { scopes: ['payments:read'], mode: 'test' })).toMatchObject({ status: 409, body: { error: 'api_key_limit_reached', details: { max_active_keys: max } } });
    expect(await call('DELETE', `/api/keys/${made[0]}`, a.manager)).toMatchObject({ status: 200 });
    expect(await call('POST', '/api/keys', a.manager, { scopes: ['payments:read'], mode: 'test' })).toMatchObject({ status: 201 });
  });

  it('revokes only keys whose scopes the caller holds, never the last keys:manage key, and records who revoked', async () => {
    const a = await org();
    const full = await access.createApiKey(a.orgId, { scopes: ['keys:manage', 'users:manage', 'payments:read', 'payments:write'], mode: 'test' });
    const me = (await call('GET', '/api/me', a.manager)).body;
    expect(await call('DELETE', `/api/keys/${full.key_id}`, a.manager)).toMatchObject({ status: 403, body: { error: 'insufficient_scope', details: { missing_scopes: ['users:manage'] } } });
    expect(await call('DELETE', `/api/keys/${me.key_id}`, full.key)).toMatchObject({ status: 200, body: { status: 'revoked' } });
    expect(await call('DELETE', `/api/keys/${full.key_id}`, full.key)).toMatchObject({ status: 409, body: { error: 'last_key_manager' } });
    expect(await call('GET', '/api/me', full.key)).toMatchObject({ status: 200 });
    const events = await t.app.get(EventStore).readStream(`organization-${a.orgId}`);
    expect(events.filter((e) => e.type === 'api_key.revoked').map((e) => e.data)).toEqual([{ key_id: me.key_id, org_id: a.orgId, reason: `revoked by ${full.key_id}`, revoked_by: full.key_id }]);
  });
});
