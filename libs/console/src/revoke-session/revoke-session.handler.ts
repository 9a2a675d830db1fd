import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { Clock, DomainError } from '@app/core';
import { retryOnConflict } from '@app/event-store';
import { revokeSession } from '../domain/session.aggregate';
import { CONSOLE_CLOCK } from '../people/console-clock';
import { ConsoleQueries, sessionView, SessionView } from '../people/console-queries';
import { SessionRepository } from '../people/console.repositories';
import { RevokeSessionCommand } from './revoke-session.command';

/** Another organization's session answers as a missing one (not_found); ending it twice records nothing. */
@CommandHandler(RevokeSessionCommand)
export class RevokeSessionHandler implements ICommandHandler<RevokeSessionCommand, SessionView> {
  constructor(
    private readonly sessions: SessionRepository,
    private readonly reads: ConsoleQueries,
    @Inject(CONSOLE_CLOCK) private readonly clock: Clock,
  ) {}

  async execute(cmd: RevokeSessionCommand): Promise<SessionView> {
    const row = await this.reads.session(cmd.sessionId);
    if (!row || (cmd.options.orgId !== undefined && row.org_id !== cmd.options.orgId)) throw new DomainError('not_found', `session ${cmd.sessionId} not found`);
    await retryOnConflict(async () => {
      const s = await this.sessions.load(cmd.sessionId);
      const events = revokeSession(s!, cmd.options.reason, cmd.options.by);
      if (events.length > 0) await this.sessions.save(cmd.sessionId, events, s);
    }, 5);
    return sessionView((await this.reads.session(cmd.sessionId))!, this.clock.now());
  }
}
