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

  it('one address is one user: a second invitation, even concurrent or elsewhere, is email_taken and records nothing', async () => {
    const w = consoleHandlers();
    const results = await Promise.allSettled([w.inviteOne('b@example.com'), w.inviteOne('B@example.com', 'viewer', 'org_b')]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect(results.find((r) => r.status === 'rejected')).toMatchObject({ reason: { code: 'email_taken' } });
    expect(w.store.rows('console_users')).toHaveLength(1);
  });

  it('a key cannot make an owner', async () => {
    const w = consoleHandlers();
    await expect(w.invite.execute(new InviteUserCommand('org_a', { email: 'o@example.com', displayName: 'O', role: 'owner' }, { kind: 'api_key', keyId: 'key_1', scopes: ['users:manage'] }))).rejects.toMatchObject({ code: 'owner_role_required' });
    expect((await w.store.readAll()).events).toHaveLength(0);
  });
});
