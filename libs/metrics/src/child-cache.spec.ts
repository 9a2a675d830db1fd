import { ChildCache, sharedProbe } from './child-cache';

describe('ChildCache', () => {
  it('makes a child once per label combination and finds it again', () => {
    const made: unknown[][] = [];
    const cache = new ChildCache<string | number, { values: unknown[] }>(3, (values) => (made.push(values), { values }));
    const a = cache.get('/x', 'GET', 200);
    expect(cache.get('/x', 'GET', 200)).toBe(a);
    expect(a.values).toEqual(['/x', 'GET', 200]);
    expect(cache.get('/x', 'GET', 404)).not.toBe(a);
    expect(cache.get('/x', 'POST', 200)).not.toBe(a);
    expect(cache.get('/y', 'GET', 200)).not.toBe(a);
    expect(made).toHaveLength(4);
  });

  it('works at depth one and two', () => {
    const one = new ChildCache<string, string>(1, ([a]) => `child:${a}`);
    expect(one.get('a')).toBe('child:a');
    const two = new ChildCache<string, string>(2, ([a, b]) => `${a}/${b}`);
    expect([two.get('a', 'b'), two.get('a', 'c'), two.get('b', 'b')]).toEqual(['a/b', 'a/c', 'b/b']);
  });

  it('keeps 200 and "200" apart only by the values given (numbers and strings are different keys)', () => {
    let n = 0;
    const cache = new ChildCache<string | number, number>(1, () => ++n);
    expect([cache.get(200), cache.get('200'), cache.get(200)]).toEqual([1, 2, 1]);
  });
});

describe('sharedProbe', () => {
  it('reads once for calls within maxAgeMs, again after', async () => {
    let clock = 0;
    let reads = 0;
    const probe = sharedProbe(async () => ++reads, 1000, () => clock);
    expect(await Promise.all([probe(), probe(), probe()])).toEqual([1, 1, 1]);
    clock = 999;
    expect(await probe()).toBe(1);
    clock = 1000;
    expect(await probe()).toBe(2);
  });

  it('does not keep a failed read: the next call reads again', async () => {
    let reads = 0;
    const probe = sharedProbe(async () => {
      reads++;
      if (reads === 1) throw new Error('database down');
      return reads;
    }, 60_000, () => 0);
    await expect(probe()).rejects.toThrow('database down');
    expect(await probe()).toBe(2);
  });
});
