import { apiKeyMatches, parseApiKey } from '../domain/api-key';
import { accessWorld } from '../keys/access-spec-fixtures';
import { CreateOrganizationCommand } from '../create-organization/create-organization.command';
import { CreateOrganizationHandler } from '../create-organization/create-organization.handler';
import { CreateApiKeyCommand } from './create-api-key.command';
import { CreateApiKeyHandler } from './create-api-key.handler';

describe('CreateApiKeyHandler (aggregate + repository on the in-memory store)', () => {
  const setup = async () => {
    const w = accessWorld();
    const org = await new CreateOrganizationHandler(w.organizations).execute(new CreateOrganizationCommand('Acme'));
    return { ...w, org, sut: new CreateApiKeyHandler(w.organizations) };
  };

  it('answers the key once and records only its hash, in the event and the row', async () => {
    const { sut, store, reads, org } = await setup();
    const created = await sut.execute(new CreateApiKeyCommand(org.org_id, { scopes: ['payments:write', 'payments:read', 'payments:write'], mode: 'test', name: 'ci' }));
    expect(created).toEqual({ key_id: expect.stringMatching(/^key_[0-9a-f]{16}$/), key: expect.stringMatching(/^cdp_test_[0-9a-f]{64}$/), org_id: org.org_id, scopes: ['payments:write', 'payments:read'], mode: 'test', expires_at: null });
    expect(parseApiKey(created.key)!.keyId).toBe(created.key_id);
    const secretPart = created.key.slice('cdp_test_'.length);
    const events = await store.readStream(`organization-${org.org_id}`);
    expect(events.map((e) => e.type)).toEqual(['organization.created', 'api_key.created']);
    expect(JSON.stringify(events)).not.toContain(secretPart);
    expect(JSON.stringify(store.rows('api_keys'))).not.toContain(secretPart);
    const row = (await reads.key(created.key_id))!;
    expect(row).toMatchObject({ org_id: org.org_id, mode: 'test', name: 'ci' });
    expect(row.revoked_at ?? null).toBeNull();
    expect(apiKeyMatches(created.key, row.secret_hash)).toBe(true);
  });

  it('keeps an expiry, and refuses keys for unknown organizations and without scopes', async () => {
    const { sut, org, store } = await setup();
    const expiring = await sut.execute(new CreateApiKeyCommand(org.org_id, { scopes: ['receipts:read'], mode: 'live', expiresAt: new Date('2027-01-01T00:00:00Z') }));
    expect(expiring).toMatchObject({ mode: 'live', expires_at: '2027-01-01T00:00:00.000Z', key: expect.stringMatching(/^cdp_live_/) });
    await expect(sut.execute(new CreateApiKeyCommand('org_000000000000000000000000', { scopes: ['payments:read'], mode: 'test' }))).rejects.toMatchObject({ code: 'not_found' });
    await expect(sut.execute(new CreateApiKeyCommand(org.org_id, { scopes: [], mode: 'test' }))).rejects.toMatchObject({ code: 'validation_failed' });
    expect((await store.readAll()).events).toHaveLength(2);
  });

  it('creates concurrent keys of one organization without losing any', async () => {
    const { sut, org, reads } = await setup();
    await Promise.all(Array.from({ length: 10 }, () => sut.execute(new CreateApiKeyCommand(org.org_id, { scopes: ['payments:read'], mode: 'test' }))));
    expect(await reads.keysOf(org.org_id)).toHaveLength(10);
  });
});
