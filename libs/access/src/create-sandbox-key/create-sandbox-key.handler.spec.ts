import { SANDBOX_SCOPES } from '../domain/scopes';
import { parseApiKey } from '../domain/api-key';
import { accessWorld } from '../keys/access-spec-fixtures';
import { CreateSandboxKeyCommand, SANDBOX_KEY_TTL_MS } from './create-sandbox-key.command';
import { CreateSandboxKeyHandler } from './create-sandbox-key.handler';

describe('CreateSandboxKeyHandler (aggregate + repository on the in-memory store)', () => {
  it('opens a sandbox organization with one test key of the sandbox scopes (never keys:manage or users:manage), expiring in 24 h, in one append', async () => {
    const { store, organizations, reads } = accessWorld();
    const now = new Date('2026-11-25T10:00:00.000Z');
    const key = await new CreateSandboxKeyHandler(organizations).execute(new CreateSandboxKeyCommand(now));
    expect(key).toEqual({
      key_id: parseApiKey(key.key)!.keyId,
      key: expect.stringMatching(/^cdp_test_[0-9a-f]{64}$/),
      org_id: expect.stringMatching(/^org_[0-9a-f]{24}$/),
      scopes: ['payments:write', 'payments:read', 'receipts:read', 'webhooks:manage', 'certificates:write', 'approvals:manage'],
      mode: 'test',
      expires_at: new Date(now.getTime() + SANDBOX_KEY_TTL_MS).toISOString(),
    });
    expect(key.scopes).toEqual([...SANDBOX_SCOPES]);
    expect(key.scopes).not.toContain('keys:manage');
    expect(key.scopes).not.toContain('users:manage');
    const events = await store.readStream(`organization-${key.org_id}`);
    expect(events.map((e) => e.type)).toEqual(['organization.created', 'api_key.created']);
    expect(events[0].data).toEqual({ org_id: key.org_id, name: 'sandbox 2026-11-25T10:00:00.000Z', kind: 'sandbox' });
    expect(events[1].data).toMatchObject({ name: 'sandbox', mode: 'test' });
    expect(await reads.organization(key.org_id)).toMatchObject({ kind: 'sandbox' });
    expect(await reads.key(key.key_id)).toMatchObject({ org_id: key.org_id, name: 'sandbox' });
  });
});
