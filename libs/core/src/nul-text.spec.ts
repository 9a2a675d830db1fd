import { nulTextPath } from './nul-text';

describe('nulTextPath', () => {
  it('names the first string or property name holding U+0000', () => {
    expect(nulTextPath({ a: 'x', b: [1, 'ok', { c: 'n\u0000' }] })).toBe('b[2].c');
    expect(nulTextPath({ ['k\u0000']: 1 })).toBe('k\u0000');
    expect(nulTextPath('\u0000')).toBe('');
  });

  it('passes what has none, whatever else it holds', () => {
    expect(nulTextPath({ a: 'x', b: [1, null, true, { c: '\\u0000 is six characters here' }], d: '€😀' })).toBeNull();
    expect(nulTextPath(null)).toBeNull();
    expect(nulTextPath(undefined)).toBeNull();
  });
});
