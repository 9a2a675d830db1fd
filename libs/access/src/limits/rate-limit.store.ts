import { RateLimiterAbstract, RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { LruCache, type Redis } from '@app/core';
import type { BucketRule } from '../domain/lanes';
import { chunkFor, Lease, leasable, leaseFrom, takeFromLease } from './token-leases';

export interface BucketState {
  limit: number;
  remaining: number;
  /** Seconds until the window resets (0 when nothing has been counted yet). */
  resetSeconds: number;
  windowSeconds: number;
}

export interface Consumed extends BucketState {
  allowed: boolean;
}

/** The counter store could not be reached; each surface decides to fail open or closed. */
export class RateLimitStoreUnavailable extends Error {
  constructor(cause: unknown) {
    super(`rate-limit store unavailable: ${cause instanceof Error ? cause.message : String(cause)}`);
    this.name = 'RateLimitStoreUnavailable';
  }
}

/**
 * Fixed-window counters (rate-limiter-flexible). In Redis the increment-and-expire is one
 * atomic script, so any number of processes enforce a limit once between them; in memory
 * (embedded mode) they are this process's alone.
 */
export abstract class RateLimitStore {
  private readonly limiters = new Map<string, RateLimiterAbstract>();

  protected abstract makeLimiter(keyPrefix: string, rule: BucketRule): RateLimiterAbstract;

  protected limiter(bucket: string, rule: BucketRule): RateLimiterAbstract {
    const id = `${bucket}:${rule.limit}:${rule.windowSeconds}`;
    let limiter = this.limiters.get(id);
    if (!limiter) this.limiters.set(id, (limiter = this.makeLimiter(`rl:${id}`, rule)));
    return limiter;
  }

  async consume(bucket: string, key: string, rule: BucketRule): Promise<Consumed> {
    try {
      const res = await this.limiter(bucket, rule).consume(key, 1);
      return { allowed: true, ...state(rule, res) };
    } catch (err) {
      if (err instanceof RateLimiterRes) return { allowed: false, ...state(rule, err) };
      throw new RateLimitStoreUnavailable(err);
    }
  }

  /** The bucket's state without counting anything (quota introspection). */
  async peek(bucket: string, key: string, rule: BucketRule): Promise<BucketState> {
    try {
      const res = await this.limiter(bucket, rule).get(key);
      return res ? state(rule, res) : { limit: rule.limit, remaining: rule.limit, resetSeconds: 0, windowSeconds: rule.windowSeconds };
    } catch (err) {
      throw new RateLimitStoreUnavailable(err);
    }
  }
}

function state(rule: BucketRule, res: RateLimiterRes): BucketState {
  return {
    limit: rule.limit,
    remaining: Math.max(0, rule.limit - res.consumedPoints),
    resetSeconds: Math.max(0, Math.ceil(res.msBeforeNext / 1000)),
    windowSeconds: rule.windowSeconds,
  };
}

export class MemoryRateLimitStore extends RateLimitStore {
  protected makeLimiter(keyPrefix: string, rule: BucketRule): RateLimiterAbstract {
    return new RateLimiterMemory({ keyPrefix, points: rule.limit, duration: rule.windowSeconds });
  }
}

/** Leases kept per process (one per busy bucket); an evicted one only wastes its unspent points. */
const LEASES_KEPT = 10_000;

export class RedisRateLimitStore extends RateLimitStore {
  private readonly leases = new LruCache<Lease>(LEASES_KEPT);
  /** The lease being asked for, per bucket: requests of the same moment wait for it instead of asking again. */
  private readonly leasing = new Map<string, Promise<void>>();

  constructor(private readonly redis: Redis) {
    super();
  }

  protected makeLimiter(keyPrefix: string, rule: BucketRule): RateLimiterAbstract {
    // Not ready = unavailable now, rather than a request parked until Redis returns.
    return new RateLimiterRedis({ storeClient: this.redis, keyPrefix, points: rule.limit, duration: rule.windowSeconds, rejectIfRedisNotReady: true });
  }

  /**
   * Large buckets (LEASE_MIN_LIMIT and up: the per-key limits) are counted from leased chunks
   * (token-leases.ts), so most requests add no round trip to Redis; smaller ones one by one.
   */
  override async consume(bucket: string, key: string, rule: BucketRule): Promise<Consumed> {
    if (!leasable(rule)) return super.consume(bucket, key, rule);
    const id = this.leaseId(bucket, key, rule);
    for (;;) {
      const taken = takeFromLease(rule, this.leases.get(id), Date.now());
      if (taken) return taken;
      const asking = this.leasing.get(id);
      if (!asking) return this.lease(id, bucket, key, rule);
      await asking;
    }
  }

  /** The shared counter's view, with the points this process holds unspent given back (they are still to be had). */
  override async peek(bucket: string, key: string, rule: BucketRule): Promise<BucketState> {
    const state = await super.peek(bucket, key, rule);
    const lease = leasable(rule) ? this.leases.get(this.leaseId(bucket, key, rule)) : undefined;
    if (!lease || lease.expiresAt <= Date.now()) return state;
    return { ...state, remaining: Math.min(rule.limit, state.remaining + lease.left) };
  }

  private leaseId(bucket: string, key: string, rule: BucketRule): string {
    return `${bucket}:${rule.limit}:${rule.windowSeconds}:${key}`;
  }

  private lease(id: string, bucket: string, key: string, rule: BucketRule): Promise<Consumed> {
    const chunk = chunkFor(rule, this.leases.get(id), Date.now());
    const asked = this.limiter(bucket, rule)
      .consume(key, chunk)
      .catch((err: unknown) => {
        if (err instanceof RateLimiterRes) return err; // past the limit: still says where the counter is
        throw new RateLimitStoreUnavailable(err);
      })
      .then((res) => {
        const { lease, counted } = leaseFrom(rule, chunk, res.consumedPoints, res.msBeforeNext, Date.now());
        this.leases.set(id, lease);
        return counted;
      });
    const done = (): void => void this.leasing.delete(id);
    this.leasing.set(id, asked.then(done, done));
    return asked;
  }
}
