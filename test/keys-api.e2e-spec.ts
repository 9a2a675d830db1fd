import { randomBytes } from 'node:crypto';
import { AccessService } from '@app/access';
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
    const created = await call('POST', '/api/keys', a.manager, { scopes: ['payments:read'], mode: 'live', name: 'reporting', owner: 'Dana' });
    expect(created).toMatchObject({ status: 201, body: { key_id: expect.stringMatching(/^key_[0-9a-f]{16}$/), key: expect.stringMatching(/^cdp_live_[0-9a-f]{64}$/), org_id: a.orgId, scopes: ['payments:read'], mode: 'live', name: 'reporting', owner: 'Dana', expires_at: null } });
    const key = created.body.key as string;
    expect(await call('GET', '/api/me', key)).toMatchObject({ status: 200, body: { key_id: created.body.key_id, scopes: ['payments:read'], mode: 'live' } });
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
});
