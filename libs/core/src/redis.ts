import Redis, { RedisOptions } from 'ioredis';

/**
 * A Redis connection for request-path use: commands fail fast while Redis is away instead of
 * queueing without bound (BullMQ workers make their own, with maxRetriesPerRequest: null).
 */
export function createRedis(url: string, options: RedisOptions = {}): Redis {
  const redis = new Redis(redisOptions(url, { lazyConnect: true, ...options }));
  redis.on('error', () => undefined); // reported through readiness, not as crashes
  return redis;
}

/**
 * The same settings as options, for a library that makes and owns its connection (BullMQ: a
 * connection it owns is ended cleanly when closed before Redis was ever reached).
 */
export function redisOptions(url: string, options: RedisOptions = {}): RedisOptions {
  const u = new URL(url);
  return {
    host: u.hostname.replace(/^\[|\]$/g, ''),
    port: u.port ? Number(u.port) : 6379,
    ...(u.username ? { username: decodeURIComponent(u.username) } : {}),
    ...(u.password ? { password: decodeURIComponent(u.password) } : {}),
    ...(u.pathname.length > 1 ? { db: Number(u.pathname.slice(1)) } : {}),
    ...(u.protocol === 'rediss:' ? { tls: {} } : {}),
    maxRetriesPerRequest: 1,
    enableOfflineQueue: true,
    connectTimeout: 2000,
    // Concurrent requests share round trips: commands issued in one tick go out as one write.
    enableAutoPipelining: true,
    retryStrategy: (times) => Math.min(times * 200, 2000),
    ...options,
  };
}

export type { Redis };
