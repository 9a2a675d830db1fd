import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { DomainError, newPrefixedId } from '@app/core';
import { WrongExpectedVersion } from '@app/event-store';
import { inviteUser, normalizeEmail } from '../domain/user.aggregate';
import { UserRepository } from '../people/console.repositories';
import { IssueSignInLinkCommand, IssuedSignInLink } from '../issue-sign-in-link/issue-sign-in-link.command';
import { IssueSignInLinkHandler } from '../issue-sign-in-link/issue-sign-in-link.handler';
import { InviteUserCommand } from './invite-user.command';

/** Load the address's stream in this organization, let the aggregate decide (free address here, role the inviter may grant), append; then issue the person's first link. Another organization's users never change the answer. */
@CommandHandler(InviteUserCommand)
export class InviteUserHandler implements ICommandHandler<InviteUserCommand, IssuedSignInLink> {
  constructor(
    private readonly users: UserRepository,
    private readonly links: IssueSignInLinkHandler,
  ) {}

  async execute(cmd: InviteUserCommand): Promise<IssuedSignInLink> {
    const email = normalizeEmail(cmd.input.email);
    const existing = await this.users.load(cmd.orgId, email);
    const userId = newPrefixedId('usr', 12);
    const events = inviteUser(existing, { ...cmd.input, email, userId, orgId: cmd.orgId }, cmd.by);
    try {
      await this.users.save(cmd.orgId, email, events, null);
    } catch (err) {
      // Invited by someone else meanwhile.
      if (err instanceof WrongExpectedVersion) throw new DomainError('email_taken', `a user with the email ${email} exists already`);
      throw err;
    }
    return this.links.execute(new IssueSignInLinkCommand(cmd.orgId, userId, cmd.by, cmd.linkTtlMs, true));
  }
}
