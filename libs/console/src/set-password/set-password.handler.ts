import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { DomainError } from '@app/core';
import { retryOnConflict } from '@app/event-store';
import { hashPassword, PASSWORD_MAX, PASSWORD_MIN, passwordMatches } from '../domain/secrets';
import { revokeSession } from '../domain/session.aggregate';
import { setPassword } from '../domain/user.aggregate';
import { ConsoleQueries, userView, UserView } from '../people/console-queries';
import { SessionRepository, UserRepository } from '../people/console.repositories';
import { SetPasswordCommand } from './set-password.command';

/** Check the current password (from the account page), store the new one's hash, then end the person's other sessions. */
@CommandHandler(SetPasswordCommand)
export class SetPasswordHandler implements ICommandHandler<SetPasswordCommand, UserView> {
  constructor(
    private readonly users: UserRepository,
    private readonly reads: ConsoleQueries,
    private readonly sessions: SessionRepository,
  ) {}

  async execute(cmd: SetPasswordCommand): Promise<UserView> {
    const length = [...cmd.password].length;
    if (length < PASSWORD_MIN || length > PASSWORD_MAX) {
      throw new DomainError('validation_failed', `a password is ${PASSWORD_MIN}..${PASSWORD_MAX} characters`, [{ field: 'password', message: `must be ${PASSWORD_MIN}..${PASSWORD_MAX} characters` }]);
    }
    const row = await this.reads.user(cmd.userId);
    if (!row || row.org_id !== cmd.orgId) throw new DomainError('not_found', `user ${cmd.userId} not found`);
    // A stolen session alone does not take the account over: the current password is asked for.
    if (cmd.asPerson && row.password_hash !== null && !(await passwordMatches(cmd.asPerson.currentPassword.slice(0, PASSWORD_MAX * 4), row.password_hash))) {
      throw new DomainError('validation_failed', 'the current password is not right', [{ field: 'current_password', message: 'is not your current password' }]);
    }
    const hash = await hashPassword(cmd.password);
    await retryOnConflict(async () => {
      const user = await this.users.load(row.org_id, row.email);
      await this.users.save(row.org_id, row.email, setPassword(user!, hash), user);
    }, 5);
    // Every other session of the person ends: whoever else held one is out. All of them (the
    // listing of sessions stops at the newest 200; an older one kept working after the change).
    if (cmd.asPerson) {
      for (const s of await this.reads.openSessionsOf(row.org_id, row.user_id)) {
        if (s.session_id === cmd.asPerson.sessionId) continue;
        await retryOnConflict(async () => {
          const session = await this.sessions.load(s.session_id);
          const events = revokeSession(session!, 'revoked', `user:${row.user_id}`);
          if (events.length > 0) await this.sessions.save(s.session_id, events, session);
        }, 5);
      }
    }
    return userView((await this.reads.user(cmd.userId))!);
  }
}
