import type { BucketRule } from '../domain/lanes';

/**
 * Counting a large bucket in leased chunks: a process takes several points of a fixed window from
 * the shared counter at once and spends them itself, so most requests never wait for Redis.
 * Plain functions over a lease; RedisRateLimitStore keeps the leases and talks to Redis.
 *
 * What holds, whatever the number of processes:
 * - never more than `limit` requests are admitted in a window: a lease is only what the shared
 *   counter granted below the limit;
 * - a process holds at most one lease per bucket, so a request refused early (because another
 *   process still holds unspent points) can only happen within that process's last chunk, and
 *   chunks shrink to one point near the end of the budget;
 * - once the shared counter has reached the limit, the window is over for everyone until it
 *   expires (fixed windows only grow): that refusal is kept here and needs no round trip.
 * Buckets under LEASE_MIN_LIMIT are counted one request at a time, as before.
 */
export const LEASE_MIN_LIMIT = 200;
/** Points leased at most at once: 1% of the limit, capped. */
export const MAX_CHUNK = 64;

export interface Lease {
  /** Points leased and not spent yet. */
  left: number;
  /**
   * The shared counter after the last lease, less the points of it that were over the limit
   * (asked for, never granted): what all processes have admitted or hold.
   */
  total: number;
  /** When the window ends (ms since the epoch, from the counter's time to live). */
  expiresAt: number;
}

export interface LeasedCount {
  allowed: boolean;
  limit: number;
  remaining: number;
  resetSeconds: number;
  windowSeconds: number;
}

export const leasable = (rule: BucketRule): boolean => rule.limit >= LEASE_MIN_LIMIT;

/** How many points to lease now: 1% of the limit (at most MAX_CHUNK), one at a time near the end of the budget. */
export function chunkFor(rule: BucketRule, last: Lease | undefined, now: number): number {
  const base = Math.max(1, Math.min(MAX_CHUNK, Math.floor(rule.limit / 100)));
  const left = last && last.expiresAt > now ? rule.limit - last.total : rule.limit;
  return left < 4 * base ? 1 : base;
}

const count = (rule: BucketRule, lease: Lease, allowed: boolean, now: number): LeasedCount => ({
  allowed,
  limit: rule.limit,
  // Other processes' unspent points count as used: never more room is promised than there is.
  remaining: Math.max(0, rule.limit - lease.total + lease.left),
  resetSeconds: Math.max(0, Math.ceil((lease.expiresAt - now) / 1000)),
  windowSeconds: rule.windowSeconds,
});

/** One request counted from the lease (spending a point), or refused on a spent window; null when only the shared counter can say. */
export function takeFromLease(rule: BucketRule, lease: Lease | undefined, now: number): LeasedCount | null {
  if (!lease || lease.expiresAt <= now) return null;
  if (lease.left > 0) {
    lease.left--;
    return count(rule, lease, true, now);
  }
  return lease.total >= rule.limit ? count(rule, lease, false, now) : null;
}

/**
 * The lease the shared counter granted for `chunk` points (it now reads `consumed`, with
 * `msBeforeNext` left in its window), with one point spent on the request that asked for it.
 */
export function leaseFrom(rule: BucketRule, chunk: number, consumed: number, msBeforeNext: number, now: number): { lease: Lease; counted: LeasedCount } {
  const granted = Math.max(0, Math.min(chunk, rule.limit - (consumed - chunk)));
  const lease: Lease = { left: Math.max(0, granted - 1), total: consumed - (chunk - granted), expiresAt: now + msBeforeNext };
  return { lease, counted: count(rule, lease, granted > 0, now) };
}
