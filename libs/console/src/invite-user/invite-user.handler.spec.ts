import { consoleHandlers } from '../people/console-handlers.fixture';
import { hashToken } from '../domain/secrets';
import { InviteUserCommand } from './invite-user.command';

describe('InviteUserHandler (aggregate + repositories on the in-memory store)', () => {
  it('records the user and a link whose token is stored only as its hash', async () => {
    const w = consoleHandlers();
    const issued = await w.inviteOne('Ada@Example.com');
    expect(issued).toMatchObject({ link_id: expect.stringMatching(/^lnk_[0-9a-f]{24}$/), token: expect.stringMatching(/^sgl_[0-9a-f]{64}$/), expires_at: '2026-11-25T12:30:00.000Z', user: { email: 'ada@example.com', role: 'reviewer', has_password: false, invited_by: 'operator' } });
    const all = (await w.store.readAll()).events;
    expect(all.map((e) => e.type)).toEqual(['user.invited', 'sign_in_link.issued']);
    expect(JSON.stringify(all)).not.toContain(issued.token);
    expect(w.store.rows('console_sign_in_links')).toEqual([expect.objectContaining({ token_hash: hashToken(issued.token), user_id: issued.user.user_id })]);
  });

  it('one address is one user of an organization: a second invitation there, even concurrent, is email_taken and records nothing', async () => {
    const w = consoleHandlers();
    const results = await Promise.allSettled([w.inviteOne('b@example.com'), w.inviteOne('B@example.com', 'viewer')]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect(results.find((r) => r.status === 'rejected')).toMatchObject({ reason: { code: 'email_taken' } });
    expect(w.store.rows('console_users')).toHaveLength(1);
  });

  it('another organization\u2019s people change no answer: the same address is invited there as another user', async () => {
    const w = consoleHandlers();
    const a = await w.inviteOne('b@example.com');
    const b = await w.inviteOne('B@example.com', 'viewer', 'org_b');
    expect(b.user).toMatchObject({ org_id: 'org_b', email: 'b@example.com' });
    expect(b.user.user_id).not.toBe(a.user.user_id);
    await expect(w.inviteOne('b@example.com', 'viewer', 'org_b')).rejects.toMatchObject({ code: 'email_taken' });
  });

  it('a user recorded under the old per-address stream is still found in its organization (and only there)', async () => {
    const w = consoleHandlers();
    const { legacyUserStream } = await import('../people/console.events');
    await w.store.append(legacyUserStream('old@example.com'), [{ type: 'user.invited', data: { user_id: 'usr_000000000000000000000001', org_id: 'org_a', email: 'old@example.com', display_name: 'Old', role: 'viewer', invited_by: 'operator' } }], { expectedRevision: 'no_stream' });
    await expect(w.inviteOne('old@example.com', 'viewer', 'org_a')).rejects.toMatchObject({ code: 'email_taken' });
    await expect(w.inviteOne('old@example.com', 'viewer', 'org_b')).resolves.toMatchObject({ user: { org_id: 'org_b' } });
    const { ChangeUserRoleCommand } = await import('../change-user-role/change-user-role.command');
    await expect(w.changeRole.execute(new ChangeUserRoleCommand('org_a', 'usr_000000000000000000000001', 'reviewer', { kind: 'operator' }))).resolves.toMatchObject({ role: 'reviewer' });
    expect((await w.store.readStream(legacyUserStream('old@example.com'))).map((e) => e.type)).toEqual(['user.invited', 'user.role_changed']);
  });

  it('a key cannot make an owner', async () => {
    const w = consoleHandlers();
    await expect(w.invite.execute(new InviteUserCommand('org_a', { email: 'o@example.com', displayName: 'O', role: 'owner' }, { kind: 'api_key', keyId: 'key_1', scopes: ['users:manage'] }))).rejects.toMatchObject({ code: 'owner_role_required' });
    expect((await w.store.readAll()).events).toHaveLength(0);
  });
});
