import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { Clock, DomainError, newPrefixedId } from '@app/core';
import { hashToken, newLinkToken } from '../domain/secrets';
import { issueSignInLink, LINK_TTL_MS } from '../domain/session.aggregate';
import { CONSOLE_CLOCK } from '../people/console-clock';
import { ConsoleQueries, userView } from '../people/console-queries';
import { SignInLinkRepository } from '../people/console.repositories';
import { IssueSignInLinkCommand, IssuedSignInLink } from './issue-sign-in-link.command';

/** Load the person, let the aggregate decide (owners' links; who receives it), save. Another organization's user answers as a missing one: not_found. */
@CommandHandler(IssueSignInLinkCommand)
export class IssueSignInLinkHandler implements ICommandHandler<IssueSignInLinkCommand, IssuedSignInLink> {
  constructor(
    private readonly links: SignInLinkRepository,
    private readonly reads: ConsoleQueries,
    @Inject(CONSOLE_CLOCK) private readonly clock: Clock,
  ) {}

  async execute(cmd: IssueSignInLinkCommand): Promise<IssuedSignInLink> {
    const user = await this.reads.user(cmd.userId);
    if (!user || user.org_id !== cmd.orgId) throw new DomainError('not_found', `user ${cmd.userId} not found`);
    const linkId = newPrefixedId('lnk', 12);
    const token = newLinkToken();
    const events = issueSignInLink({ linkId, orgId: user.org_id, user, tokenHash: hashToken(token), newAccount: cmd.newAccount }, cmd.by, this.clock.now(), cmd.ttlMs ?? LINK_TTL_MS);
    await this.links.save(linkId, events, null);
    const { expires_at, delivered_to } = events[0].data;
    return { link_id: linkId, token, delivered_to: delivered_to!, expires_at, user: userView(user) };
  }
}
