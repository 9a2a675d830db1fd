import { exponentialDelay, jitter, parseRetryAfter } from './backoff';

describe('backoff helpers', () => {
  const now = Date.parse('2025-06-01T12:00:00Z');

  it('reads Retry-After as delta-seconds or an HTTP date', () => {
    expect(parseRetryAfter('0', now)).toBe(0);
    expect(parseRetryAfter(' 12 ', now)).toBe(12_000);
    expect(parseRetryAfter('1.5', now)).toBe(1500);
    expect(parseRetryAfter('Sun, 01 Jun 2025 12:01:00 GMT', now)).toBe(60_000);
    expect(parseRetryAfter('Sun, 01 Jun 2025 11:00:00 GMT', now)).toBe(0); // in the past: no wait
    for (const bad of [null, undefined, '', '-5', 'soon', '12 s', 'Sunday']) expect(parseRetryAfter(bad, now)).toBeNull();
  });

  it('grows exponentially from 500 ms and caps', () => {
    expect([1, 2, 3, 4, 5, 6].map((a) => exponentialDelay(a))).toEqual([500, 1000, 2000, 4000, 8000, 16000]);
    expect(exponentialDelay(20)).toBe(30_000);
    expect(exponentialDelay(3, 100, 250)).toBe(250);
  });

  it('keeps jitter in [0, 500) whatever the random source says', () => {
    expect(jitter(() => 0)).toBe(0);
    expect(jitter(() => 0.5)).toBe(250);
    expect(jitter(() => 0.9999999)).toBe(499);
    expect(jitter(() => 1)).toBe(0);
    expect(jitter(() => NaN)).toBe(0);
    for (let i = 0; i < 1000; i++) {
      const j = jitter(Math.random);
      expect(j).toBeGreaterThanOrEqual(0);
      expect(j).toBeLessThan(500);
    }
  });
});
