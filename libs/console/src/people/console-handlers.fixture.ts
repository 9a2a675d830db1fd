import { fixedClock } from '@app/core';
import { ChangeUserRoleHandler } from '../change-user-role/change-user-role.handler';
import { DeactivateUserHandler } from '../deactivate-user/deactivate-user.handler';
import { InviteUserCommand } from '../invite-user/invite-user.command';
import { InviteUserHandler } from '../invite-user/invite-user.handler';
import { IssueSignInLinkHandler } from '../issue-sign-in-link/issue-sign-in-link.handler';
import { RedeemSignInLinkHandler } from '../redeem-sign-in-link/redeem-sign-in-link.handler';
import { RevokeSessionHandler } from '../revoke-session/revoke-session.handler';
import { SetPasswordHandler } from '../set-password/set-password.handler';
import { SignInWithPasswordHandler } from '../sign-in-with-password/sign-in-with-password.handler';
import { consoleWorld } from './console-spec-fixtures';

/** Specs: every console handler on one in-memory store, with a clock the spec moves. */
export function consoleHandlers() {
  const clock = fixedClock('2026-11-25T12:00:00Z');
  const w = consoleWorld(() => clock.now());
  const links = new IssueSignInLinkHandler(w.links, w.reads, clock);
  const h = {
    links,
    invite: new InviteUserHandler(w.users, links),
    changeRole: new ChangeUserRoleHandler(w.users, w.reads),
    deactivate: new DeactivateUserHandler(w.users, w.sessions, w.reads),
    setPassword: new SetPasswordHandler(w.users, w.reads, w.sessions),
    redeem: new RedeemSignInLinkHandler(w.links, w.sessions, w.reads, clock),
    signIn: new SignInWithPasswordHandler(w.sessions, w.reads, clock),
    revoke: new RevokeSessionHandler(w.sessions, w.reads, clock),
  };
  const inviteOne = (email: string, role = 'reviewer', orgId = 'org_a') => h.invite.execute(new InviteUserCommand(orgId, { email, displayName: email.split('@')[0], role }, { kind: 'operator' }));
  return { ...w, clock, ...h, inviteOne };
}
