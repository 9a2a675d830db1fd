import { consoleHandlers } from '../people/console-handlers.fixture';
import { ChangeUserRoleCommand } from './change-user-role.command';

describe('ChangeUserRoleHandler', () => {
  it('changes a role in the read model at once; another organization\u2019s user is not found', async () => {
    const w = consoleHandlers();
    const { user } = await w.inviteOne('a@example.com', 'viewer');
    expect(await w.changeRole.execute(new ChangeUserRoleCommand('org_a', user.user_id, 'reviewer', { kind: 'api_key', keyId: 'key_1', scopes: ['users:manage', 'payments:read', 'receipts:read', 'approvals:manage'] }))).toMatchObject({ role: 'reviewer' });
    await expect(w.changeRole.execute(new ChangeUserRoleCommand('org_b', user.user_id, 'admin', { kind: 'operator' }))).rejects.toMatchObject({ code: 'not_found' });
    await expect(w.changeRole.execute(new ChangeUserRoleCommand('org_a', user.user_id, 'owner', { kind: 'user', userId: 'usr_x', role: 'admin' }))).rejects.toMatchObject({ code: 'owner_role_required' });
    expect((await w.reads.user(user.user_id))!.role).toBe('reviewer');
  });
});
