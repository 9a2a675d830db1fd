import { createHash } from 'node:crypto';
import { RateLimitStore, RateLimitStoreUnavailable } from '@app/access';
import { AppError } from '@app/core';

/**
 * Sign-in attempts are limited before any password is checked: 10 failed attempts per 15 minutes
 * per email address (a successful sign-in is not counted, so a stranger guessing cannot lock a
 * person out any sooner than their own mistakes would; the check and the count are two steps, so
 * a burst of concurrent guesses may pass a few over), and 30 attempts of any outcome per 15
 * minutes per client address (links included), in the same counter store
 * as the API's limits (Redis when configured, so every process counts once). Over a limit: 429
 * with Retry-After. When the store is down sign-in fails closed (503): guessing passwords
 * unthrottled is worse than waiting.
 */
export const SIGN_IN_PER_EMAIL = { limit: 10, windowSeconds: 900 };
export const SIGN_IN_PER_IP = { limit: 30, windowSeconds: 900 };

const opaque = (value: string) => createHash('sha256').update(value, 'utf8').digest('hex').slice(0, 32);

export class SignInThrottle {
  constructor(
    private readonly store: RateLimitStore,
    private readonly enabled: boolean,
  ) {}

  /** Before the password is checked: refused when the client's address is over its limit, or the email has used its failures. */
  async admit(ip: string, email?: string): Promise<void> {
    if (!this.enabled) return;
    await this.guard(async () => {
      const ipCount = await this.store.consume('console_sign_in_ip', opaque(ip), SIGN_IN_PER_IP);
      const retries = ipCount.allowed ? [] : [ipCount.resetSeconds];
      if (email !== undefined) {
        const failures = await this.store.peek('console_sign_in_email', opaque(email.trim().toLowerCase()), SIGN_IN_PER_EMAIL);
        if (failures.remaining <= 0) retries.push(failures.resetSeconds);
      }
      if (retries.length) {
        const retry = Math.max(...retries.map((r) => Math.max(1, r)));
        throw new AppError('rate_limited', `Too many sign-in attempts; try again in ${Math.ceil(retry / 60)} minute(s)`, 429, undefined, { 'retry-after': String(retry) });
      }
    });
  }

  /** A wrong password (or unknown address) counts against the address typed. */
  async failed(email: string): Promise<void> {
    if (!this.enabled) return;
    await this.guard(() => this.store.consume('console_sign_in_email', opaque(email.trim().toLowerCase()), SIGN_IN_PER_EMAIL));
  }

  private async guard<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (err) {
      if (err instanceof RateLimitStoreUnavailable) throw new AppError('rate_limiter_unavailable', 'Signing in is unavailable for a moment; retry shortly', 503, undefined, { 'retry-after': '5' });
      throw err;
    }
  }
}
