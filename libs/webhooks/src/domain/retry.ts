/**
 * What an attempt's result means for the delivery: delivered, retry later, or failed for good.
 * Retried: network errors, timeouts, 429 and 5xx, on the schedule, never earlier than the
 * receiver's Retry-After. Failed at once: any other 4xx, and 3xx (redirects are not followed:
 * following one would let a public URL bounce the request to a private target, and a receiver
 * that moved must be re-registered). 410 Gone also disables the endpoint.
 */
export interface AttemptResult {
  /** The receiver's status, or null when no response arrived. */
  statusCode: number | null;
  /** Why no (usable) response arrived. */
  error: string | null;
  errorKind: 'network' | 'timeout' | 'target_not_allowed' | null;
  retryAfter: string | null;
}

export type Decision =
  | { outcome: 'delivered' }
  | { outcome: 'retry'; nextAttemptAt: Date }
  | { outcome: 'failed'; reason: 'non_retryable' | 'retries_exhausted'; disableEndpoint: boolean };

/** Default: about 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h (Svix's schedule, as DESIGN.md asks). */
export const DEFAULT_RETRY_SCHEDULE_MS = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000];

/** A Retry-After longer than this is read as this: a receiver cannot park a delivery forever. */
export const RETRY_AFTER_CAP_MS = 24 * 3600 * 1000;

export function isRetryable(r: AttemptResult): boolean {
  if (r.statusCode === null) return r.errorKind === 'network' || r.errorKind === 'timeout';
  return r.statusCode === 429 || r.statusCode >= 500;
}

/** Retry-After as delay-seconds or an HTTP date; null when absent or unreadable. */
export function parseRetryAfter(value: string | null, now: Date): number | null {
  if (!value) return null;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Math.min(Number(v) * 1000, RETRY_AFTER_CAP_MS);
  const at = Date.parse(v);
  if (Number.isNaN(at) || !/[a-z]/i.test(v)) return null;
  return Math.min(Math.max(0, at - now.getTime()), RETRY_AFTER_CAP_MS);
}

/**
 * @param attempt the 1-based number of this attempt within its series (a redelivery starts a new series)
 * @param schedule delays before the 2nd, 3rd… attempts
 */
export function decide(r: AttemptResult, attempt: number, schedule: readonly number[], now: Date): Decision {
  if (r.statusCode !== null && r.statusCode >= 200 && r.statusCode < 300) return { outcome: 'delivered' };
  if (!isRetryable(r)) return { outcome: 'failed', reason: 'non_retryable', disableEndpoint: r.statusCode === 410 };
  if (attempt > schedule.length) return { outcome: 'failed', reason: 'retries_exhausted', disableEndpoint: false };
  const delay = Math.max(schedule[attempt - 1], parseRetryAfter(r.retryAfter, now) ?? 0);
  return { outcome: 'retry', nextAttemptAt: new Date(now.getTime() + delay) };
}

/** An endpoint whose attempts have all failed since `failingSince` is disabled after `days`. */
export const failingTooLong = (failingSince: Date | null, now: Date, days: number): boolean =>
  failingSince !== null && now.getTime() - failingSince.getTime() >= days * 86_400_000;
