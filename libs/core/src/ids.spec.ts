import { derivedPrefixedId, newPrefixedId } from './ids';

describe('prefixed ids', () => {
  it('random ones are all different, in the prefix_hex shape', () => {
    const ids = Array.from({ length: 2000 }, () => newPrefixedId('txn'));
    expect(new Set(ids).size).toBe(2000);
    for (const id of ids) expect(id).toMatch(/^txn_[0-9a-f]{32}$/);
  });

  it('derived ones have the same shape, are the same for the same seed and prefix, and differ otherwise', () => {
    const a = derivedPrefixedId('txn', 'seed-1');
    expect(a).toMatch(/^txn_[0-9a-f]{32}$/);
    expect(derivedPrefixedId('txn', 'seed-1')).toBe(a);
    expect(derivedPrefixedId('txn', 'seed-2')).not.toBe(a);
    // The prefix is part of what is hashed: one request's transaction and authorization ids are unrelated.
    expect(derivedPrefixedId('auth', 'seed-1').slice(5)).not.toBe(a.slice(4));
    expect(derivedPrefixedId('txn', 'seed-1', 8)).toMatch(/^txn_[0-9a-f]{16}$/);
  });
});
