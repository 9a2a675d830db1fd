import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { Clock, DomainError } from '@app/core';
import { PASSWORD_MAX, passwordMatches } from '../domain/secrets';
import { CONSOLE_CLOCK } from '../people/console-clock';
import { ConsoleQueries } from '../people/console-queries';
import { SessionRepository } from '../people/console.repositories';
import { openSession, SignedIn } from '../people/open-session';
import { SignInWithPasswordCommand } from './sign-in-with-password.command';

/**
 * An unknown address, a user without a password and a wrong password all answer the same
 * sign_in_failed, after the same scrypt work (a dummy hash when there is no user's).
 */
@CommandHandler(SignInWithPasswordCommand)
export class SignInWithPasswordHandler implements ICommandHandler<SignInWithPasswordCommand, SignedIn> {
  constructor(
    private readonly sessions: SessionRepository,
    private readonly reads: ConsoleQueries,
    @Inject(CONSOLE_CLOCK) private readonly clock: Clock,
  ) {}

  async execute(cmd: SignInWithPasswordCommand): Promise<SignedIn> {
    const email = cmd.email.trim().toLowerCase();
    const user = email.length > 0 && email.length <= 254 ? await this.reads.userByEmail(email) : null;
    const ok = await passwordMatches(cmd.password.slice(0, PASSWORD_MAX * 4), user?.password_hash ?? null);
    if (!user || !ok || user.deactivated_at) throw new DomainError('sign_in_failed', 'Wrong email or password');
    return openSession(this.sessions, this.reads, user, 'password', this.clock.now());
  }
}
