import Redis, { RedisOptions } from 'ioredis';

/**
 * A Redis connection for request-path use: commands fail fast while Redis is away instead of
 * queueing without bound (BullMQ workers make their own, with maxRetriesPerRequest: null).
 */
export function createRedis(url: string, options: RedisOptions = {}): Redis {
  const redis = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: true,
    connectTimeout: 2000,
    // Concurrent requests share round trips: commands issued in one tick go out as one write.
    enableAutoPipelining: true,
    retryStrategy: (times) => Math.min(times * 200, 2000),
    ...options,
  });
  redis.on('error', () => undefined); // reported through readiness, not as crashes
  return redis;
}

export type { Redis };
