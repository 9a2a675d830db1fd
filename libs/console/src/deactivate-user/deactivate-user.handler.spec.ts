import { consoleHandlers } from '../people/console-handlers.fixture';
import { RedeemSignInLinkCommand } from '../redeem-sign-in-link/redeem-sign-in-link.command';
import { IssueSignInLinkCommand } from '../issue-sign-in-link/issue-sign-in-link.command';
import { SetPasswordCommand } from '../set-password/set-password.command';
import { SignInWithPasswordCommand } from '../sign-in-with-password/sign-in-with-password.command';
import { DeactivateUserCommand } from './deactivate-user.command';

describe('DeactivateUserHandler', () => {
  it('deactivates: the read model says since when, every session ends, and neither a link nor a password signs them in', async () => {
    const w = consoleHandlers();
    const { token, user } = await w.inviteOne('a@example.com', 'viewer');
    const session = await w.redeem.execute(new RedeemSignInLinkCommand(token));
    await w.setPassword.execute(new SetPasswordCommand('org_a', user.user_id, 'a long enough password'));
    const unused = await w.links.execute(new IssueSignInLinkCommand('org_a', user.user_id, { kind: 'operator' }));

    const view = await w.deactivate.execute(new DeactivateUserCommand('org_a', user.user_id, { kind: 'user', userId: 'usr_admin', role: 'admin' }));
    expect(view.deactivated_at).toEqual(expect.any(String));
    expect(w.store.rows('console_sessions')).toEqual([expect.objectContaining({ session_id: session.session.session_id, revoked_at: expect.anything() })]);
    await expect(w.signIn.execute(new SignInWithPasswordCommand('a@example.com', 'a long enough password'))).rejects.toMatchObject({ code: 'sign_in_failed' });
    await expect(w.redeem.execute(new RedeemSignInLinkCommand(unused.token))).rejects.toMatchObject({ code: 'sign_in_failed' });
    // Again: no change; another organization's: not found.
    await expect(w.deactivate.execute(new DeactivateUserCommand('org_a', user.user_id, { kind: 'operator' }))).resolves.toMatchObject({ deactivated_at: view.deactivated_at });
    await expect(w.deactivate.execute(new DeactivateUserCommand('org_b', user.user_id, { kind: 'operator' }))).rejects.toMatchObject({ code: 'not_found' });
  });

  it('keeps the last owner', async () => {
    const w = consoleHandlers();
    const { user: first } = await w.inviteOne('o1@example.com', 'owner');
    await expect(w.deactivate.execute(new DeactivateUserCommand('org_a', first.user_id, { kind: 'operator' }))).rejects.toMatchObject({ code: 'last_owner' });
    const { user: second } = await w.inviteOne('o2@example.com', 'owner');
    await expect(w.deactivate.execute(new DeactivateUserCommand('org_a', first.user_id, { kind: 'user', userId: second.user_id, role: 'owner' }))).resolves.toMatchObject({ deactivated_at: expect.any(String) });
    await expect(w.deactivate.execute(new DeactivateUserCommand('org_a', second.user_id, { kind: 'operator' }))).rejects.toMatchObject({ code: 'last_owner' });
  });
});

describe('SetPasswordHandler from the account page', () => {
  it('asks for the current password once one is set, and ends the person\u2019s other sessions', async () => {
    const w = consoleHandlers();
    const invited = await w.inviteOne('a@example.com', 'viewer');
    const here = await w.redeem.execute(new RedeemSignInLinkCommand(invited.token));
    const first = await w.setPassword.execute(new SetPasswordCommand('org_a', invited.user.user_id, 'the first password', { currentPassword: '', sessionId: here.session.session_id }));
    expect(first.has_password).toBe(true);
    const elsewhere = await w.signIn.execute(new SignInWithPasswordCommand('a@example.com', 'the first password'));
    await expect(w.setPassword.execute(new SetPasswordCommand('org_a', invited.user.user_id, 'the second password', { currentPassword: 'not the first one', sessionId: here.session.session_id }))).rejects.toMatchObject({
      code: 'validation_failed',
      details: [{ field: 'current_password', message: 'is not your current password' }],
    });
    await w.setPassword.execute(new SetPasswordCommand('org_a', invited.user.user_id, 'the second password', { currentPassword: 'the first password', sessionId: here.session.session_id }));
    const rows = w.store.rows('console_sessions') as unknown as { session_id: string; revoked_at: unknown }[];
    expect(rows.find((r) => r.session_id === here.session.session_id)!.revoked_at ?? null).toBeNull();
    expect(rows.find((r) => r.session_id === elsewhere.session.session_id)!.revoked_at).toBeTruthy();
  });
});
