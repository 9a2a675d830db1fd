import { BatchLoader, deepFreeze, LruCache } from './caching';

describe('LruCache', () => {
  it('keeps the most recently used entries up to its capacity', () => {
    const sut = new LruCache<number>(2);
    sut.set('a', 1);
    sut.set('b', 2);
    expect(sut.get('a')).toBe(1); // a is now the most recent
    sut.set('c', 3); // evicts b
    expect(sut.get('b')).toBeUndefined();
    expect(sut.get('a')).toBe(1);
    expect(sut.get('c')).toBe(3);
    expect(sut.size).toBe(2);
  });

  it('replaces a value without growing', () => {
    const sut = new LruCache<number>(2);
    sut.set('a', 1);
    sut.set('a', 2);
    expect(sut.size).toBe(1);
    expect(sut.get('a')).toBe(2);
  });

  it('refuses a capacity below one', () => {
    expect(() => new LruCache(0)).toThrow(RangeError);
  });
});

describe('deepFreeze', () => {
  it('freezes nested objects and arrays', () => {
    const value = deepFreeze({ a: { b: [1, { c: 2 }] } });
    expect(Object.isFrozen(value.a)).toBe(true);
    expect(Object.isFrozen(value.a.b)).toBe(true);
    expect(Object.isFrozen(value.a.b[1])).toBe(true);
  });
});

describe('BatchLoader', () => {
  it('serves the lookups of one moment with one call, each distinct key once', async () => {
    const calls: string[][] = [];
    const sut = new BatchLoader<string>(async (keys) => {
      calls.push(keys);
      return new Map(keys.filter((k) => k !== 'missing').map((k) => [k, k.toUpperCase()]));
    });
    const results = await Promise.all(['a', 'b', 'a', 'missing'].map((k) => sut.load(k)));
    expect(results).toEqual(['A', 'B', 'A', undefined]);
    expect(calls).toEqual([['a', 'b', 'missing']]);
    expect(await sut.load('c')).toBe('C'); // a later lookup is a new read
    expect(calls).toHaveLength(2);
  });

  it('splits at the batch size and passes a failure to every waiter of its batch', async () => {
    const calls: string[][] = [];
    const sut = new BatchLoader<string>(async (keys) => {
      calls.push(keys);
      if (keys.includes('bad')) throw new Error('boom');
      return new Map(keys.map((k) => [k, k]));
    }, 2);
    const settled = await Promise.allSettled(['a', 'b', 'bad', 'c'].map((k) => sut.load(k)));
    expect(calls).toEqual([['a', 'b'], ['bad', 'c']]);
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'rejected']);
  });
});
