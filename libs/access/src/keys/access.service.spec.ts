import { openTestStore } from '../../../../test/support/test-store';
import { parseApiKey } from '../domain/api-key';
import { accessMigrations } from './access.migrations';
import { AccessService } from './access.service';
import { AccessReadModel } from './access-read-model.repository';

describe('AccessService (on the real store)', () => {
  let t: Awaited<ReturnType<typeof openTestStore>>;
  let access: AccessService;
  beforeAll(async () => {
    t = await openTestStore(accessMigrations);
    access = new AccessService(new AccessReadModel(t.db), t.store);
  });
  afterAll(() => t?.dispose());

  it('creates an organization and a key, storing only the key hash', async () => {
    const org = await access.createOrganization('  Acme  ');
    expect(org).toMatchObject({ org_id: expect.stringMatching(/^org_[0-9a-f]{24}$/), name: 'Acme', kind: 'standard' });
    const created = await access.createApiKey(org.org_id, { scopes: ['payments:write', 'payments:read'], mode: 'test', name: 'ci' });
    expect(created.key).toMatch(/^cdp_test_[0-9a-f]{64}$/);
    const secretPart = created.key.slice('cdp_test_'.length);

    const rows = await t.db.query<Record<string, unknown>>('SELECT * FROM api_keys');
    expect(JSON.stringify(rows)).not.toContain(secretPart);
    const events = await t.store.readStream(`organization-${org.org_id}`);
    expect(events.map((e) => e.type)).toEqual(['organization.created', 'api_key.created']);
    expect(JSON.stringify(events)).not.toContain(secretPart);
    expect((await t.store.verifyStream(`organization-${org.org_id}`)).valid).toBe(true);

    expect(await access.listApiKeys(org.org_id)).toEqual([
      expect.objectContaining({ key_id: created.key_id, scopes: ['payments:write', 'payments:read'], status: 'active', name: 'ci' }),
    ]);
    expect(JSON.stringify(await access.listApiKeys(org.org_id))).not.toMatch(/secret|hash/);
  });

  it('authenticates the right key and refuses wrong, unknown, revoked and expired ones', async () => {
    const org = await access.createOrganization('Beta');
    const k = await access.createApiKey(org.org_id, { scopes: ['receipts:read'], mode: 'live' });
    const parsed = parseApiKey(k.key)!;
    expect(await access.authenticate(parsed)).toEqual({ orgId: org.org_id, keyId: k.key_id, scopes: ['receipts:read'], mode: 'live' });

    // Same lookup id, different secret: refused.
    const forged = k.key.slice(0, 25) + (k.key.at(-1) === 'a' ? 'b' : 'a').padStart(k.key.length - 25, '0');
    expect(await access.authenticate(parseApiKey(forged)!)).toBeNull();
    // The same secret presented as the other mode: refused.
    expect(await access.authenticate(parseApiKey(k.key.replace('cdp_live_', 'cdp_test_'))!)).toBeNull();

    const revoked = await access.revokeApiKey(k.key_id, { reason: 'leaked' });
    expect(revoked.status).toBe('revoked');
    expect(await access.authenticate(parsed)).toBeNull();
    expect((await access.revokeApiKey(k.key_id)).revoked_at).toBe(revoked.revoked_at);

    const expiring = await access.createApiKey(org.org_id, { scopes: ['receipts:read'], mode: 'test', expiresAt: new Date(Date.now() - 1000) });
    expect(await access.authenticate(parseApiKey(expiring.key)!)).toBeNull();
    expect((await access.getApiKey(expiring.key_id)).status).toBe('expired');
  });

  it("answers another organization's key as not found", async () => {
    const a = await access.createOrganization('A');
    const b = await access.createOrganization('B');
    const key = await access.createApiKey(a.org_id, { scopes: ['payments:read'], mode: 'test' });
    await expect(access.getApiKey(key.key_id, b.org_id)).rejects.toMatchObject({ status: 404, code: 'not_found' });
    await expect(access.revokeApiKey(key.key_id, { orgId: b.org_id })).rejects.toMatchObject({ status: 404 });
    expect((await access.getApiKey(key.key_id, a.org_id)).status).toBe('active');
  });

  it('refuses keys for unknown organizations, without scopes, and unnamed organizations', async () => {
    // The aggregate refuses with codes (DomainError); the error catalogue gives them 404 and 400 over HTTP.
    await expect(access.createApiKey('org_000000000000000000000000', { scopes: ['payments:read'], mode: 'test' })).rejects.toMatchObject({ code: 'not_found' });
    const org = await access.createOrganization('C');
    await expect(access.createApiKey(org.org_id, { scopes: [], mode: 'test' })).rejects.toMatchObject({ code: 'validation_failed' });
    await expect(access.createOrganization('   ')).rejects.toMatchObject({ code: 'validation_failed' });
  });
});
