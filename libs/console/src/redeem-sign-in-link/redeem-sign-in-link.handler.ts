import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { Clock, DomainError, newPrefixedId } from '@app/core';
import { WrongExpectedVersion } from '@app/event-store';
import { hashToken, LINK_TOKEN_RE } from '../domain/secrets';
import { redeemSignInLink } from '../domain/session.aggregate';
import { CONSOLE_CLOCK } from '../people/console-clock';
import { ConsoleQueries } from '../people/console-queries';
import { SessionRepository, SignInLinkRepository } from '../people/console.repositories';
import { openSession, SignedIn } from '../people/open-session';
import { RedeemSignInLinkCommand } from './redeem-sign-in-link.command';

const refused = () => new DomainError('sign_in_failed', 'This sign-in link is invalid, used or expired; ask for a new one');

/**
 * Find the link by its token's hash, load it, let the aggregate decide (unused, in time), append
 * the redemption at the revision loaded (two clicks racing: one wins), then start the session.
 */
@CommandHandler(RedeemSignInLinkCommand)
export class RedeemSignInLinkHandler implements ICommandHandler<RedeemSignInLinkCommand, SignedIn> {
  constructor(
    private readonly links: SignInLinkRepository,
    private readonly sessions: SessionRepository,
    private readonly reads: ConsoleQueries,
    @Inject(CONSOLE_CLOCK) private readonly clock: Clock,
  ) {}

  async execute(cmd: RedeemSignInLinkCommand): Promise<SignedIn> {
    if (!LINK_TOKEN_RE.test(cmd.token)) throw refused();
    const row = await this.reads.linkByTokenHash(hashToken(cmd.token));
    if (!row) throw refused();
    // A deactivated person's links open nothing (checked before the link is used up).
    if ((await this.reads.user(row.user_id))?.deactivated_at) throw refused();
    const link = await this.links.load(row.link_id);
    const now = this.clock.now();
    const sessionId = newPrefixedId('ses', 12);
    try {
      await this.links.save(row.link_id, redeemSignInLink(link, sessionId, now), link);
    } catch (err) {
      if (err instanceof WrongExpectedVersion) throw refused();
      throw err;
    }
    return openSession(this.sessions, this.reads, row, 'link', now, sessionId);
  }
}
