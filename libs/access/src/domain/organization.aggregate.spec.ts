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

  describe('a key creating keys (created_by is its id)', () => {
    const now = new Date('2026-11-25T12:00:00Z');
    const limits = { now, maxActiveKeys: 100 };
    const orgWith = (...keys: { keyId: string; mode: 'test' | 'live'; scopes: Parameters<typeof createApiKey>[3]['scopes']; expiresAt?: Date | null; revoked?: boolean }[]) => {
      const events: { type: string; data: unknown }[] = [...createOrganization('org_1', 'Acme', 'standard')];
      for (const k of keys) {
        events.push(...createApiKey(foldOrganization(events), 'org_1', { keyId: k.keyId, mode: k.mode, secretHash: 'f'.repeat(64) }, { scopes: k.scopes, expiresAt: k.expiresAt ?? null }, limits));
        if (k.revoked) events.push(...revokeApiKey(foldOrganization(events)!, k.keyId, null, { revokedBy: 'operator', now }));
      }
      return foldOrganization(events);
    };
    const newKey = (mode: 'test' | 'live') => ({ keyId: 'key_new', mode, secretHash: 'e'.repeat(64) });

    it('records created_by, and gives the new key no other mode than its creator’s', () => {
      const org = orgWith({ keyId: 'key_mgr', mode: 'test', scopes: ['keys:manage', 'payments:read'] });
      expect(createApiKey(org, 'org_1', newKey('test'), { scopes: ['payments:read'], createdBy: 'key_mgr' }, limits)[0].data).toMatchObject({ created_by: 'key_mgr', mode: 'test' });
      expect(() => createApiKey(org, 'org_1', newKey('live'), { scopes: ['payments:read'], createdBy: 'key_mgr' }, limits)).toThrow(
        expect.objectContaining({ code: 'key_mode_mismatch', details: { creator_mode: 'test', requested_mode: 'live' } }),
      );
      expect(createApiKey(org, 'org_1', newKey('live'), { scopes: ['payments:read'], createdBy: 'operator' }, limits)[0].data).toMatchObject({ created_by: 'operator', mode: 'live' });
      expect(createApiKey(org, 'org_1', newKey('live'), { scopes: ['payments:read'] }, limits)[0].data).not.toHaveProperty('created_by');
    });

    it('refuses scopes the creator lacks, and a revoked or unknown creator', () => {
      const org = orgWith({ keyId: 'key_mgr', mode: 'test', scopes: ['keys:manage', 'payments:read'] }, { keyId: 'key_gone', mode: 'test', scopes: ['keys:manage'], revoked: true });
      expect(() => createApiKey(org, 'org_1', newKey('test'), { scopes: ['users:manage'], createdBy: 'key_mgr' }, limits)).toThrow(expect.objectContaining({ code: 'insufficient_scope', details: { missing_scopes: ['users:manage'] } }));
      for (const creator of ['key_gone', 'key_unknown']) {
        expect(() => createApiKey(org, 'org_1', newKey('test'), { scopes: ['keys:manage'], createdBy: creator }, limits)).toThrow(expect.objectContaining({ code: 'forbidden' }));
      }
    });

    it('refuses (never shortens) an expiry later than the creator’s, or none, when the creator expires', () => {
      const creatorExpiry = new Date('2026-12-01T00:00:00Z');
      const org = orgWith({ keyId: 'key_mgr', mode: 'test', scopes: ['keys:manage', 'payments:read'], expiresAt: creatorExpiry });
      for (const expiresAt of [null, undefined, new Date('2026-12-01T00:00:01Z')]) {
        expect(() => createApiKey(org, 'org_1', newKey('test'), { scopes: ['payments:read'], createdBy: 'key_mgr', expiresAt }, limits)).toThrow(
          expect.objectContaining({ code: 'key_expiry_beyond_creator', details: { creator_expires_at: '2026-12-01T00:00:00.000Z' } }),
        );
      }
      expect(createApiKey(org, 'org_1', newKey('test'), { scopes: ['payments:read'], createdBy: 'key_mgr', expiresAt: creatorExpiry }, limits)[0].data.expires_at).toBe('2026-12-01T00:00:00.000Z');
    });

    it('caps the organization’s active keys (revoked and expired ones do not count)', () => {
      const org = orgWith(
        { keyId: 'key_a', mode: 'test', scopes: ['keys:manage'] },
        { keyId: 'key_b', mode: 'test', scopes: ['payments:read'], revoked: true },
        { keyId: 'key_c', mode: 'test', scopes: ['payments:read'], expiresAt: new Date('2026-11-25T12:00:01Z') },
      );
      expect(() => createApiKey(org, 'org_1', newKey('test'), { scopes: ['payments:read'] }, { now, maxActiveKeys: 2 })).toThrow(
        expect.objectContaining({ code: 'api_key_limit_reached', details: { active_keys: 2, max_active_keys: 2 } }),
      );
      expect(createApiKey(org, 'org_1', newKey('test'), { scopes: ['payments:read'] }, { now: new Date('2026-11-25T12:00:02Z'), maxActiveKeys: 2 })).toHaveLength(1);
    });

    it('lets a key revoke only keys whose scopes it holds, records who revoked, and never the last keys:manage key', () => {
      const org = orgWith(
        { keyId: 'key_full', mode: 'test', scopes: ['keys:manage', 'users:manage', 'payments:read'] },
        { keyId: 'key_mgr', mode: 'test', scopes: ['keys:manage', 'payments:read'] },
        { keyId: 'key_reader', mode: 'test', scopes: ['payments:read'] },
      )!;
      expect(() => revokeApiKey(org, 'key_full', null, { revokedBy: 'key_mgr', now })).toThrow(expect.objectContaining({ code: 'insufficient_scope', details: { missing_scopes: ['users:manage'] } }));
      expect(revokeApiKey(org, 'key_reader', 'done', { revokedBy: 'key_mgr', now })).toEqual([
        { type: 'api_key.revoked', data: { key_id: 'key_reader', org_id: 'org_1', reason: 'done', revoked_by: 'key_mgr' } },
      ]);
      // key_full may revoke key_mgr (a subset); then key_full is the last keys:manage key: not even itself, nor a user.
      const after = applyOrganization(org, revokeApiKey(org, 'key_mgr', null, { revokedBy: 'key_full', now })[0]);
      for (const by of ['key_full', 'user:usr_1', null]) {
        expect(() => revokeApiKey(after, 'key_full', null, { revokedBy: by, now })).toThrow(expect.objectContaining({ code: 'last_key_manager' }));
      }
      // The operator (the admin CLI can always create a key) may.
      expect(revokeApiKey(after, 'key_full', 'leaked', { revokedBy: 'operator', now })[0].data).toMatchObject({ revoked_by: 'operator' });
    });
  });

  it('folds only its own events, in order', () => {
    expect(() => applyOrganization(null, { type: 'api_key.created', data: {} })).toThrow(DomainError);
    const org = foldOrganization(createOrganization('org_1', 'Acme', 'standard'))!;
    expect(() => applyOrganization(org, { type: 'organization.created', data: {} })).toThrow(DomainError);
    expect(() => applyOrganization(org, { type: 'Something', data: {} })).toThrow(DomainError);
  });
});
