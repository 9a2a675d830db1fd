import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { DomainError } from '@app/core';
import { retryOnConflict } from '@app/event-store';
import { changeRole } from '../domain/user.aggregate';
import { ConsoleQueries, userView, UserView } from '../people/console-queries';
import { UserRepository } from '../people/console.repositories';
import { ChangeUserRoleCommand } from './change-user-role.command';

/** Find the user (read model), load their stream, let the aggregate decide, append at the revision loaded (a race decides again). */
@CommandHandler(ChangeUserRoleCommand)
export class ChangeUserRoleHandler implements ICommandHandler<ChangeUserRoleCommand, UserView> {
  constructor(
    private readonly users: UserRepository,
    private readonly reads: ConsoleQueries,
  ) {}

  async execute(cmd: ChangeUserRoleCommand): Promise<UserView> {
    const row = await this.reads.user(cmd.userId);
    if (!row || row.org_id !== cmd.orgId) throw new DomainError('not_found', `user ${cmd.userId} not found`);
    await retryOnConflict(async () => {
      const user = await this.users.load(row.org_id, row.email);
      const events = changeRole(user!, cmd.role, cmd.by);
      if (events.length > 0) await this.users.save(row.org_id, row.email, events, user);
    }, 5);
    return userView((await this.reads.user(cmd.userId))!);
  }
}
