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
 * An unknown address, a user without a password, a deactivated one and a wrong password all answer
 * the same sign_in_failed, after scrypt work (a dummy hash when there is no user's). An address that
 * is a person in several organizations is tried against each account (oldest first, at most 10);
 * the first whose password matches opens, so one password per organization picks the organization.
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
    const password = cmd.password.slice(0, PASSWORD_MAX * 4);
    const users = email.length > 0 && email.length <= 254 ? (await this.reads.usersByEmail(email)).filter((u) => !u.deactivated_at) : [];
    // One address may be a person in several organizations: the oldest account whose password matches opens.
    let match: (typeof users)[number] | null = null;
    for (const user of users) {
      if (await passwordMatches(password, user.password_hash)) {
        match = user;
        break;
      }
    }
    if (users.length === 0) await passwordMatches(password, null);
    if (!match) throw new DomainError('sign_in_failed', 'Wrong email or password');
    return openSession(this.sessions, this.reads, match, 'password', this.clock.now());
  }
}
