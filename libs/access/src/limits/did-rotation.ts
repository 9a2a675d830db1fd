import type { Redis } from '@app/core';
import { DID_ROTATION } from '../domain/lanes';
import { RateLimitStoreUnavailable } from './rate-limit.store';

export interface RotationState {
  /** Whether this DID is (now) one of the IP's counted DIDs. */
  admitted: boolean;
  unique: number;
  max: number;
  windowSeconds: number;
  resetAt: Date;
}

/**
 * The per-IP cap on distinct agent DIDs per window. A DID already counted in the window is
 * always admitted; a new one only while the IP has fewer than `max`.
 */
export abstract class DidRotationTracker {
  constructor(
    protected readonly max: number = DID_ROTATION.max,
    protected readonly windowSeconds: number = DID_ROTATION.windowSeconds,
  ) {}

  /** Counts the DID for the IP if there is room; `peek` only reports. */
  abstract admit(ip: string, didKey: string, peek?: boolean): Promise<RotationState>;

  protected windowStart(nowMs: number): number {
    return Math.floor(nowMs / 1000 / this.windowSeconds) * this.windowSeconds;
  }
}

export class MemoryDidRotationTracker extends DidRotationTracker {
  private readonly windows = new Map<string, { start: number; dids: Set<string> }>();

  async admit(ip: string, didKey: string, peek = false): Promise<RotationState> {
    const start = this.windowStart(Date.now());
    let w = this.windows.get(ip);
    if (!w || w.start !== start) {
      w = { start, dids: new Set() };
      if (!peek) this.windows.set(ip, w);
      if (this.windows.size > 100_000) this.windows.clear(); // bound memory; windows are short-lived
    }
    let admitted = w.dids.has(didKey);
    if (!admitted && w.dids.size < this.max) {
      admitted = true;
      if (!peek) w.dids.add(didKey);
    }
    return { admitted, unique: w.dids.size, max: this.max, windowSeconds: this.windowSeconds, resetAt: new Date((start + this.windowSeconds) * 1000) };
  }
}

// Atomic check-and-add: member, or room left, or refused; the set expires with its window.
const ADMIT_LUA = `
local key, did, max, ttl, peek = KEYS[1], ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4] == '1'
if redis.call('SISMEMBER', key, did) == 1 then return {1, redis.call('SCARD', key)} end
local n = redis.call('SCARD', key)
if n < max then
  if peek then return {1, n} end
  redis.call('SADD', key, did)
  redis.call('EXPIRE', key, ttl)
  return {1, n + 1}
end
return {0, n}`;

export class RedisDidRotationTracker extends DidRotationTracker {
  constructor(
    private readonly redis: Redis,
    max?: number,
    windowSeconds?: number,
  ) {
    super(max, windowSeconds);
  }

  async admit(ip: string, didKey: string, peek = false): Promise<RotationState> {
    const start = this.windowStart(Date.now());
    if (this.redis.status !== 'ready') throw new RateLimitStoreUnavailable(new Error(`redis ${this.redis.status}`));
    try {
      const [ok, unique] = (await this.redis.eval(ADMIT_LUA, 1, `didrot:${start}:${ip}`, didKey, this.max, this.windowSeconds + 60, peek ? '1' : '0')) as [number, number];
      return { admitted: ok === 1, unique, max: this.max, windowSeconds: this.windowSeconds, resetAt: new Date((start + this.windowSeconds) * 1000) };
    } catch (err) {
      throw new RateLimitStoreUnavailable(err);
    }
  }
}
