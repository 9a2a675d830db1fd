import { changeRole, deactivateUser, foldUser, inviteUser, USER_DEACTIVATED, normalizeEmail, setPassword, USER_INVITED, USER_ROLE_CHANGED, UserActor } from './user.aggregate';
import { ROLE_SCOPES, scopesOf } from './roles';

const owner: UserActor = { kind: 'user', userId: 'usr_owner', role: 'owner' };
const admin: UserActor = { kind: 'user', userId: 'usr_admin', role: 'admin' };
const key: UserActor = { kind: 'api_key', keyId: 'key_0123456789abcdef', scopes: ['users:manage', 'payments:read', 'receipts:read', 'approvals:manage'] };
const input = { userId: 'usr_1', orgId: 'org_a', email: '  Ada@Example.COM ', displayName: ' Ada ', role: 'reviewer' };
const invited = (role = 'reviewer') => foldUser(inviteUser(null, { ...input, role }, { kind: 'operator' }))!;

describe('User aggregate', () => {
  it('invites with the address normalized and the name trimmed, naming who invited', () => {
    expect(inviteUser(null, input, key)).toEqual([
      { type: USER_INVITED, data: { user_id: 'usr_1', org_id: 'org_a', email: 'ada@example.com', display_name: 'Ada', role: 'reviewer', invited_by: 'api_key:key_0123456789abcdef' } },
    ]);
  });

  it('refuses a taken address, bad fields, and owners made by anyone but an owner or the operator', () => {
    expect(() => inviteUser(invited(), input, owner)).toThrow(expect.objectContaining({ code: 'email_taken' }));
    expect(() => inviteUser(null, { ...input, email: 'nope' }, owner)).toThrow(expect.objectContaining({ code: 'validation_failed' }));
    expect(() => inviteUser(null, { ...input, displayName: '   ' }, owner)).toThrow(expect.objectContaining({ code: 'validation_failed' }));
    expect(() => inviteUser(null, { ...input, displayName: 'a\u0007b' }, owner)).toThrow(expect.objectContaining({ code: 'validation_failed' }));
    expect(() => inviteUser(null, { ...input, role: 'root' }, owner)).toThrow(expect.objectContaining({ code: 'validation_failed' }));
    expect(() => inviteUser(null, { ...input, role: 'owner' }, admin)).toThrow(expect.objectContaining({ code: 'owner_role_required' }));
    expect(() => inviteUser(null, { ...input, role: 'owner' }, key)).toThrow(expect.objectContaining({ code: 'owner_role_required' }));
    expect(inviteUser(null, { ...input, role: 'owner' }, owner)).toHaveLength(1);
  });

  it('a key gives or changes only roles whose scopes it holds itself', () => {
    const narrow: UserActor = { kind: 'api_key', keyId: 'key_1', scopes: ['users:manage', 'payments:read', 'receipts:read'] };
    expect(inviteUser(null, { ...input, role: 'viewer' }, narrow)).toHaveLength(1);
    expect(() => inviteUser(null, { ...input, role: 'reviewer' }, narrow)).toThrow(expect.objectContaining({ code: 'insufficient_scope', details: { missing_scopes: ['approvals:manage'] } }));
    expect(() => inviteUser(null, { ...input, role: 'admin' }, key)).toThrow(expect.objectContaining({ code: 'insufficient_scope' }));
    expect(() => changeRole(invited('viewer'), 'admin', key)).toThrow(expect.objectContaining({ code: 'insufficient_scope' }));
    expect(() => changeRole(invited('admin'), 'viewer', key)).toThrow(expect.objectContaining({ code: 'insufficient_scope' }));
    expect(changeRole(invited('reviewer'), 'viewer', key)).toHaveLength(1);
  });

  it('changes roles: not one\u2019s own, owners only by owners, the same role is no event', () => {
    const user = invited();
    expect(changeRole(user, 'viewer', admin)).toEqual([{ type: USER_ROLE_CHANGED, data: { user_id: 'usr_1', org_id: 'org_a', role: 'viewer', previous_role: 'reviewer', changed_by: 'user:usr_admin' } }]);
    expect(changeRole(user, 'reviewer', admin)).toEqual([]);
    expect(() => changeRole(user, 'owner', admin)).toThrow(expect.objectContaining({ code: 'owner_role_required' }));
    expect(() => changeRole(invited('owner'), 'viewer', key)).toThrow(expect.objectContaining({ code: 'owner_role_required' }));
    expect(() => changeRole(invited('owner'), 'viewer', { kind: 'user', userId: 'usr_1', role: 'owner' })).toThrow(expect.objectContaining({ code: 'forbidden' }));
    expect(changeRole(invited('owner'), 'admin', owner)).toHaveLength(1);
    expect(() => changeRole(user, 'god', owner)).toThrow(expect.objectContaining({ code: 'validation_failed' }));
  });

  it('folds its history; a password enters as its hash only', () => {
    const user = invited();
    const events = [...inviteUser(null, input, owner), ...changeRole(user, 'admin', owner), ...setPassword(user, 'scrypt$…')];
    expect(foldUser(events)).toMatchObject({ role: 'admin', revision: 2, email: 'ada@example.com' });
    expect(normalizeEmail(' X@Y.Z ')).toBe('x@y.z');
  });

  it('maps roles onto the API\u2019s scopes', () => {
    expect(scopesOf('viewer')).toEqual(['payments:read', 'receipts:read']);
    expect(scopesOf('reviewer')).toEqual(['payments:read', 'receipts:read', 'approvals:manage']);
    expect(ROLE_SCOPES.admin).toEqual(expect.arrayContaining(['users:manage', 'keys:manage', 'approvals:manage']));
    expect(ROLE_SCOPES.owner).toEqual(ROLE_SCOPES.admin);
  });
});

describe('deactivating a person', () => {
  const fold = (role: string) => foldUser(inviteUser(null, { ...input, role }, { kind: 'operator' }))!;
  it('by an owner or admin (or a key holding the role\u2019s scopes, or the operator), naming who; again is no event', () => {
    const viewer = fold('viewer');
    expect(deactivateUser(viewer, admin, 1)).toEqual([{ type: USER_DEACTIVATED, data: { user_id: 'usr_1', org_id: 'org_a', role: 'viewer', deactivated_by: 'user:usr_admin' } }]);
    expect(deactivateUser(viewer, key, 1)).toHaveLength(1);
    expect(deactivateUser(viewer, { kind: 'operator' }, 1)).toHaveLength(1);
    const gone = foldUser([...inviteUser(null, { ...input, role: 'viewer' }, { kind: 'operator' }), ...deactivateUser(viewer, admin, 1)])!;
    expect(gone).toMatchObject({ active: false, revision: 1 });
    expect(deactivateUser(gone, admin, 1)).toEqual([]);
  });
  it('never oneself, never by a reviewer or viewer, an owner only by an owner, never the last owner', () => {
    expect(() => deactivateUser(fold('admin'), { kind: 'user', userId: 'usr_1', role: 'admin' }, 2)).toThrow(expect.objectContaining({ code: 'forbidden' }));
    expect(() => deactivateUser(fold('viewer'), { kind: 'user', userId: 'usr_r', role: 'reviewer' }, 2)).toThrow(expect.objectContaining({ code: 'forbidden' }));
    expect(() => deactivateUser(fold('owner'), admin, 2)).toThrow(expect.objectContaining({ code: 'owner_role_required' }));
    expect(() => deactivateUser(fold('owner'), key, 2)).toThrow(expect.objectContaining({ code: 'owner_role_required' }));
    expect(deactivateUser(fold('owner'), owner, 2)).toHaveLength(1);
    expect(() => deactivateUser(fold('owner'), owner, 1)).toThrow(expect.objectContaining({ code: 'last_owner' }));
    expect(() => deactivateUser(fold('owner'), { kind: 'operator' }, 1)).toThrow(expect.objectContaining({ code: 'last_owner' }));
    const narrow: UserActor = { kind: 'api_key', keyId: 'key_1', scopes: ['users:manage', 'payments:read', 'receipts:read'] };
    expect(() => deactivateUser(fold('admin'), narrow, 1)).toThrow(expect.objectContaining({ code: 'insufficient_scope' }));
  });
});
