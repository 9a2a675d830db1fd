import { RateLimiterAbstract, RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { Redis } from '@app/core';
import type { BucketRule } from '../domain/lanes';

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

  private limiter(bucket: string, rule: BucketRule): RateLimiterAbstract {
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

export class RedisRateLimitStore extends RateLimitStore {
  constructor(private readonly redis: Redis) {
    super();
  }

  protected makeLimiter(keyPrefix: string, rule: BucketRule): RateLimiterAbstract {
    // Not ready = unavailable now, rather than a request parked until Redis returns.
    return new RateLimiterRedis({ storeClient: this.redis, keyPrefix, points: rule.limit, duration: rule.windowSeconds, rejectIfRedisNotReady: true });
  }
}
