import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { DomainError } from '@app/core';
import { retryOnConflict } from '@app/event-store';
import { revokeSession } from '../domain/session.aggregate';
import { actorName, deactivateUser } from '../domain/user.aggregate';
import { ConsoleQueries, userView, UserView } from '../people/console-queries';
import { SessionRepository, UserRepository } from '../people/console.repositories';
import { DeactivateUserCommand } from './deactivate-user.command';

/**
 * Find the user (read model), load their stream, let the aggregate decide (who may; never oneself;
 * never the last owner: counted from the read model), append at the revision loaded; then end each
 * of their sessions (each a revocation on its own stream). Sign-in and every session read also
 * refuse a deactivated person, so a session missed here opens nothing.
 */
@CommandHandler(DeactivateUserCommand)
export class DeactivateUserHandler implements ICommandHandler<DeactivateUserCommand, UserView> {
  constructor(
    private readonly users: UserRepository,
    private readonly sessions: SessionRepository,
    private readonly reads: ConsoleQueries,
  ) {}

  async execute(cmd: DeactivateUserCommand): Promise<UserView> {
    const row = await this.reads.user(cmd.userId);
    if (!row || row.org_id !== cmd.orgId) throw new DomainError('not_found', `user ${cmd.userId} not found`);
    await retryOnConflict(async () => {
      const user = await this.users.load(row.org_id, row.email);
      const owners = (await this.reads.usersOf(cmd.orgId)).filter((u) => u.role === 'owner' && !u.deactivated_at).length;
      const events = deactivateUser(user!, cmd.by, owners);
      if (events.length > 0) await this.users.save(row.org_id, row.email, events, user);
    }, 5);
    for (const s of await this.reads.openSessionsOf(cmd.orgId, cmd.userId)) {
      await retryOnConflict(async () => {
        const session = await this.sessions.load(s.session_id);
        const events = revokeSession(session!, 'revoked', actorName(cmd.by));
        if (events.length > 0) await this.sessions.save(s.session_id, events, session);
      }, 5);
    }
    return userView((await this.reads.user(cmd.userId))!);
  }
}
