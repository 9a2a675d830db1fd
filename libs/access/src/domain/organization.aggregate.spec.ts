import { DomainError } from '@app/core';
import { applyOrganization, createApiKey, createOrganization, foldOrganization, revokeApiKey } from './organization.aggregate';

const key = { keyId: 'key_abc', mode: 'test' as const, secretHash: 'f'.repeat(64) };

describe('Organization aggregate (organizations and their API keys)', () => {
  it('opens with OrganizationCreated (the name trimmed) and refuses a blank or over-long name', () => {
    expect(createOrganization('org_1', '  Acme  ', 'standard')).toEqual([{ type: 'organization.created', data: { org_id: 'org_1', name: 'Acme', kind: 'standard' } }]);
    for (const bad of ['   ', 'x'.repeat(201)]) expect(() => createOrganization('org_1', bad, 'standard')).toThrow(DomainError);
  });

  it('creates keys carrying their hash only, with distinct scopes, for an existing organization', () => {
    const org = foldOrganization(createOrganization('org_1', 'Acme', 'standard'));
    const [e] = createApiKey(org, 'org_1', key, { scopes: ['payments:read', 'payments:read', 'receipts:read'], name: 'ci', expiresAt: new Date('2027-01-01T00:00:00Z') });
    expect(e).toEqual({
      type: 'api_key.created',
      data: { key_id: 'key_abc', org_id: 'org_1', mode: 'test', scopes: ['payments:read', 'receipts:read'], secret_hash: 'f'.repeat(64), name: 'ci', owner: null, expires_at: '2027-01-01T00:00:00.000Z' },
    });
    expect(createApiKey(org, 'org_1', key, { scopes: ['payments:read'], owner: '  Dana  ' })[0].data.owner).toBe('Dana');
    expect(() => createApiKey(org, 'org_1', key, { scopes: ['payments:read'], owner: 'x'.repeat(201) })).toThrow(expect.objectContaining({ code: 'validation_failed' }));
    expect(() => createApiKey(null, 'org_x', key, { scopes: ['payments:read'] })).toThrow(expect.objectContaining({ code: 'not_found' }));
    expect(() => createApiKey(org, 'org_1', key, { scopes: [] })).toThrow(expect.objectContaining({ code: 'validation_failed' }));
  });

  it('revokes a key once: revoking again records nothing; an unknown key is not_found', () => {
    const opened = createOrganization('org_1', 'Acme', 'standard');
    let org = foldOrganization([...opened, ...createApiKey(foldOrganization(opened), 'org_1', key, { scopes: ['payments:read'] })]);
    const revoked = revokeApiKey(org!, 'key_abc', 'leaked');
    expect(revoked).toEqual([{ type: 'api_key.revoked', data: { key_id: 'key_abc', org_id: 'org_1', reason: 'leaked' } }]);
    org = applyOrganization(org, revoked[0]);
    expect(org.revision).toBe(2);
    expect(revokeApiKey(org, 'key_abc', null)).toEqual([]);
    expect(() => revokeApiKey(org!, 'key_nope', null)).toThrow(expect.objectContaining({ code: 'not_found' }));
  });

  it('folds only its own events, in order', () => {
    expect(() => applyOrganization(null, { type: 'api_key.created', data: {} })).toThrow(DomainError);
    const org = foldOrganization(createOrganization('org_1', 'Acme', 'standard'))!;
    expect(() => applyOrganization(org, { type: 'organization.created', data: {} })).toThrow(DomainError);
    expect(() => applyOrganization(org, { type: 'Something', data: {} })).toThrow(DomainError);
  });
});
