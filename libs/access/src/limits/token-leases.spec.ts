import { chunkFor, Lease, leaseFrom, LEASE_MIN_LIMIT, leasable, MAX_CHUNK, takeFromLease } from './token-leases';

const rule = (limit: number) => ({ limit, windowSeconds: 60 });
const NOW = 1_000_000;

describe('token leases', () => {
  it('leases only buckets of LEASE_MIN_LIMIT and up, in chunks of 1% capped at MAX_CHUNK', () => {
    expect(leasable(rule(LEASE_MIN_LIMIT - 1))).toBe(false);
    expect(leasable(rule(LEASE_MIN_LIMIT))).toBe(true);
    expect(chunkFor(rule(1200), undefined, NOW)).toBe(12);
    expect(chunkFor(rule(100_000_000), undefined, NOW)).toBe(MAX_CHUNK);
    expect(chunkFor(rule(200), undefined, NOW)).toBe(2);
  });

  it('asks for one point at a time near the end of the budget, and a full chunk again once the window is over', () => {
    const near: Lease = { left: 0, total: 1200 - 40, expiresAt: NOW + 5000 };
    expect(chunkFor(rule(1200), near, NOW)).toBe(1);
    expect(chunkFor(rule(1200), { ...near, total: 1200 - 48 }, NOW)).toBe(12);
    expect(chunkFor(rule(1200), near, NOW + 5000)).toBe(12);
  });

  it('grants what the counter had room for, spends one point on the asker, and counts the rest as remaining', () => {
    // The counter read 100 after adding our 12: 12 granted, one spent now.
    const { lease, counted } = leaseFrom(rule(1200), 12, 100, 30_000, NOW);
    expect(lease).toEqual({ left: 11, total: 100, expiresAt: NOW + 30_000 });
    expect(counted).toEqual({ allowed: true, limit: 1200, remaining: 1111, resetSeconds: 30, windowSeconds: 60 });
    // Only 3 points were left under the limit.
    const partial = leaseFrom(rule(1200), 12, 1209, 1_500, NOW);
    expect(partial.lease).toEqual({ left: 2, total: 1200, expiresAt: NOW + 1_500 });
    expect(partial.counted).toMatchObject({ allowed: true, remaining: 2, resetSeconds: 2 });
    // None left: refused, and the spent window is remembered.
    const none = leaseFrom(rule(1200), 12, 1212, 1_500, NOW);
    expect(none.lease).toEqual({ left: 0, total: 1200, expiresAt: NOW + 1_500 });
    expect(takeFromLease(rule(1200), none.lease, NOW)).toMatchObject({ allowed: false });
    expect(none.counted).toMatchObject({ allowed: false, remaining: 0 });
  });

  it('spends a lease point by point, then says only the counter knows, or refuses once the window is spent', () => {
    const lease: Lease = { left: 2, total: 500, expiresAt: NOW + 10_000 };
    expect(takeFromLease(rule(1200), lease, NOW)).toMatchObject({ allowed: true, remaining: 701 });
    expect(takeFromLease(rule(1200), lease, NOW)).toMatchObject({ allowed: true, remaining: 700 });
    expect(takeFromLease(rule(1200), lease, NOW)).toBeNull();
    const spent: Lease = { left: 0, total: 1210, expiresAt: NOW + 10_000 };
    expect(takeFromLease(rule(1200), spent, NOW)).toEqual({ allowed: false, limit: 1200, remaining: 0, resetSeconds: 10, windowSeconds: 60 });
    // A lease outlives nothing: past its window it is neither spent nor refusing.
    expect(takeFromLease(rule(1200), { left: 5, total: 10, expiresAt: NOW }, NOW)).toBeNull();
    expect(takeFromLease(rule(1200), spent, NOW + 10_000)).toBeNull();
    expect(takeFromLease(rule(1200), undefined, NOW)).toBeNull();
  });
});
