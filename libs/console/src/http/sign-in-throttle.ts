import { createHash } from 'node:crypto';
import { RateLimitStore, RateLimitStoreUnavailable } from '@app/access';
import { AppError } from '@app/core';

/**
 * Sign-in attempts are counted before any password is checked: 10 per 15 minutes per email
 * address, and 30 per 15 minutes per client address (links included), in the same counter store
 * as the API's limits (Redis when configured, so every process counts once). Over a limit: 429
 * with Retry-After. When the store is down sign-in fails closed (503): guessing passwords
 * unthrottled is worse than waiting.
 */
export const SIGN_IN_PER_EMAIL = { limit: 10, windowSeconds: 900 };
export const SIGN_IN_PER_IP = { limit: 30, windowSeconds: 900 };

const opaque = (value: string) => createHash('sha256').update(value, 'utf8').digest('hex').slice(0, 32);

export class SignInThrottle {
  constructor(
    private readonly store: () => RateLimitStore,
    private readonly enabled: boolean,
  ) {}

  async admit(ip: string, email?: string): Promise<void> {
    if (!this.enabled) return;
    try {
      const counts = [await this.store().consume('console_sign_in_ip', opaque(ip), SIGN_IN_PER_IP)];
      if (email !== undefined) counts.push(await this.store().consume('console_sign_in_email', opaque(email.trim().toLowerCase()), SIGN_IN_PER_EMAIL));
      const refused = counts.filter((c) => !c.allowed);
      if (refused.length) {
        const retry = Math.max(...refused.map((c) => Math.max(1, c.resetSeconds)));
        throw new AppError('rate_limited', `Too many sign-in attempts; try again in ${Math.ceil(retry / 60)} minute(s)`, 429, undefined, { 'retry-after': String(retry) });
      }
    } catch (err) {
      if (err instanceof RateLimitStoreUnavailable) throw new AppError('rate_limiter_unavailable', 'Signing in is unavailable for a moment; retry shortly', 503, undefined, { 'retry-after': '5' });
      throw err;
    }
  }
}
