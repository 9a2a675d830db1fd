import { randomBytes } from 'node:crypto';
import { createRedis, Redis } from '@app/core';
import { RedisRateLimitStore } from './rate-limit.store';

/** Two stores on one Redis: what two api processes see. */
describe('RedisRateLimitStore (Redis)', () => {
  const url = process.env.REDIS_URL;
  if (!url) throw new Error('REDIS_URL is required');
  let a: Redis;
  let b: Redis;
  beforeAll(async () => {
    a = createRedis(url);
    b = createRedis(url);
    await Promise.all([a.connect(), b.connect()]);
  });
  afterAll(async () => {
    await Promise.all([a.quit(), b.quit()]);
  });

  const fresh = () => `t_${randomBytes(6).toString('hex')}`;

  it('admits exactly the limit of a large bucket between two processes, whatever the interleaving', async () => {
    const rule = { limit: 300, windowSeconds: 60 };
    const key = fresh();
    const one = new RedisRateLimitStore(a);
    const two = new RedisRateLimitStore(b);
    const results = await Promise.all(Array.from({ length: 900 }, (_, i) => (i % 3 ? one : two).consume('bench_bucket', key, rule)));
    // Never more than the limit; fewer only by what the other process still held when the budget ran out.
    const admitted = results.filter((r) => r.allowed).length;
    expect(admitted).toBeLessThanOrEqual(300);
    expect(admitted).toBeGreaterThanOrEqual(300 - 2);
    // Once the counter is spent, both refuse for the rest of the window.
    expect((await one.consume('bench_bucket', key, rule)).allowed).toBe(false);
    expect((await two.consume('bench_bucket', key, rule)).allowed).toBe(false);
  });

  it('counts a large bucket in chunks: one process, exact remaining counts, a handful of round trips', async () => {
    const rule = { limit: 1200, windowSeconds: 60 };
    const key = fresh();
    const store = new RedisRateLimitStore(a);
    const remaining: number[] = [];
    for (let i = 0; i < 100; i++) remaining.push((await store.consume('key_window', key, rule)).remaining);
    expect(remaining).toEqual(Array.from({ length: 100 }, (_, i) => 1199 - i));
    // The shared counter moved in leases of 12: 9 leases for 100 requests.
    expect(Number(await a.get(`rl:key_window:1200:60:${key}`))).toBe(108);
  });

  it('counts small buckets one request at a time, exactly', async () => {
    const rule = { limit: 5, windowSeconds: 60 };
    const key = fresh();
    const one = new RedisRateLimitStore(a);
    const two = new RedisRateLimitStore(b);
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => (i % 2 ? one : two).consume('small', key, rule)));
    expect(results.filter((r) => r.allowed)).toHaveLength(5);
    expect(Number(await a.get(`rl:small:5:60:${key}`))).toBe(12);
  });

  it('spends the whole budget from one process, and refuses the next request with the window\'s reset', async () => {
    const rule = { limit: 250, windowSeconds: 30 };
    const key = fresh();
    const store = new RedisRateLimitStore(a);
    const results = await Promise.all(Array.from({ length: 260 }, () => store.consume('key_window', key, rule)));
    expect(results.filter((r) => r.allowed)).toHaveLength(250);
    const refused = await store.consume('key_window', key, rule);
    expect(refused).toMatchObject({ allowed: false, remaining: 0, limit: 250 });
    expect(refused.resetSeconds).toBeGreaterThan(0);
    expect(refused.resetSeconds).toBeLessThanOrEqual(30);
  });

  it("reports a large bucket's remaining count exactly to the process that holds its lease", async () => {
    const rule = { limit: 300, windowSeconds: 60 };
    const key = fresh();
    const store = new RedisRateLimitStore(a);
    for (let i = 0; i < 4; i++) await store.consume('badge_window', key, rule);
    expect(await store.peek('badge_window', key, rule)).toMatchObject({ limit: 300, remaining: 296 });
    // Another process sees the points this one holds as taken: never more room than there is.
    expect((await new RedisRateLimitStore(b).peek('badge_window', key, rule)).remaining).toBeLessThanOrEqual(296);
  });
});
