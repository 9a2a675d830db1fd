import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { DomainError } from '@app/core';
import { retryOnConflict } from '@app/event-store';
import { hashPassword, PASSWORD_MAX, PASSWORD_MIN } from '../domain/secrets';
import { setPassword } from '../domain/user.aggregate';
import { ConsoleQueries, userView, UserView } from '../people/console-queries';
import { UserRepository } from '../people/console.repositories';
import { SetPasswordCommand } from './set-password.command';

@CommandHandler(SetPasswordCommand)
export class SetPasswordHandler implements ICommandHandler<SetPasswordCommand, UserView> {
  constructor(
    private readonly users: UserRepository,
    private readonly reads: ConsoleQueries,
  ) {}

  async execute(cmd: SetPasswordCommand): Promise<UserView> {
    const length = [...cmd.password].length;
    if (length < PASSWORD_MIN || length > PASSWORD_MAX) {
      throw new DomainError('validation_failed', `a password is ${PASSWORD_MIN}..${PASSWORD_MAX} characters`, [{ field: 'password', message: `must be ${PASSWORD_MIN}..${PASSWORD_MAX} characters` }]);
    }
    const row = await this.reads.user(cmd.userId);
    if (!row || row.org_id !== cmd.orgId) throw new DomainError('not_found', `user ${cmd.userId} not found`);
    const hash = await hashPassword(cmd.password);
    await retryOnConflict(async () => {
      const user = await this.users.load(row.email);
      await this.users.save(row.email, setPassword(user!, hash), user);
    }, 5);
    return userView((await this.reads.user(cmd.userId))!);
  }
}
