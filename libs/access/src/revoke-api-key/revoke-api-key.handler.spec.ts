import { accessWorld } from '../keys/access-spec-fixtures';
import { CreateApiKeyCommand } from '../create-api-key/create-api-key.command';
import { CreateApiKeyHandler } from '../create-api-key/create-api-key.handler';
import { CreateOrganizationCommand } from '../create-organization/create-organization.command';
import { CreateOrganizationHandler } from '../create-organization/create-organization.handler';
import { RevokeApiKeyCommand } from './revoke-api-key.command';
import { RevokeApiKeyHandler } from './revoke-api-key.handler';

describe('RevokeApiKeyHandler (aggregate + repository on the in-memory store)', () => {
  const setup = async () => {
    const w = accessWorld();
    const newOrg = async (name: string) => (await new CreateOrganizationHandler(w.organizations).execute(new CreateOrganizationCommand(name))).org_id;
    const newKey = (orgId: string) => new CreateApiKeyHandler(w.organizations).execute(new CreateApiKeyCommand(orgId, { scopes: ['payments:read'], mode: 'test' }));
    return { ...w, newOrg, newKey, sut: new RevokeApiKeyHandler(w.organizations, w.reads) };
  };

  it('records ApiKeyRevoked with the reason and answers the revoked view; revoking again records nothing', async () => {
    const { sut, store, newOrg, newKey } = await setup();
    const org = await newOrg('A');
    const key = await newKey(org);
    const revoked = await sut.execute(new RevokeApiKeyCommand(key.key_id, { reason: 'leaked' }));
    expect(revoked).toMatchObject({ key_id: key.key_id, org_id: org, status: 'revoked', revoked_at: expect.any(String) });
    expect(JSON.stringify(revoked)).not.toMatch(/secret|hash/);
    const again = await sut.execute(new RevokeApiKeyCommand(key.key_id));
    expect(again.revoked_at).toBe(revoked.revoked_at);
    const events = await store.readStream(`organization-${org}`);
    expect(events.map((e) => [e.type, e.data])).toEqual([
      ['organization.created', expect.anything()],
      ['api_key.created', expect.anything()],
      ['api_key.revoked', { key_id: key.key_id, org_id: org, reason: 'leaked' }],
    ]);
  });

  it("answers an unknown key, and another organization's key, as not found (404), recording nothing", async () => {
    const { sut, store, newOrg, newKey } = await setup();
    const a = await newOrg('A');
    const b = await newOrg('B');
    const key = await newKey(a);
    await expect(sut.execute(new RevokeApiKeyCommand(key.key_id, { orgId: b }))).rejects.toMatchObject({ status: 404, code: 'not_found' });
    await expect(sut.execute(new RevokeApiKeyCommand('key_0000000000000000'))).rejects.toMatchObject({ status: 404, code: 'not_found' });
    expect((await store.readStream(`organization-${a}`)).map((e) => e.type)).toEqual(['organization.created', 'api_key.created']);
    expect(await sut.execute(new RevokeApiKeyCommand(key.key_id, { orgId: a }))).toMatchObject({ status: 'revoked' });
  });

  it('decides again when the organization changed meanwhile (concurrent revocations record one event)', async () => {
    const { sut, store, newOrg, newKey } = await setup();
    const org = await newOrg('A');
    const key = await newKey(org);
    await newKey(org);
    await Promise.all([sut.execute(new RevokeApiKeyCommand(key.key_id)), sut.execute(new RevokeApiKeyCommand(key.key_id)), newKey(org)]);
    expect((await store.readStream(`organization-${org}`)).filter((e) => e.type === 'api_key.revoked')).toHaveLength(1);
  });
});
