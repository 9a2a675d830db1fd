import { randomBytes } from 'node:crypto';
import { fromBase64Url, toBase64Url } from './base64url';

describe('toBase64Url', () => {
  it('encodes with the URL-safe alphabet and no padding', () => {
    expect(toBase64Url(new Uint8Array([]))).toBe('');
    expect(toBase64Url(new Uint8Array([0]))).toBe('AA');
    expect(toBase64Url(new Uint8Array([0, 0]))).toBe('AAA');
    expect(toBase64Url(new Uint8Array([0, 0, 0]))).toBe('AAAA');
    expect(toBase64Url(new Uint8Array([0xfb, 0xff]))).toBe('-_8');
    expect(toBase64Url(new Uint8Array([0xfb, 0xef, 0xbe]))).toBe('----');
    expect(toBase64Url(new Uint8Array([0xff, 0xff, 0xff]))).toBe('____');
    expect(toBase64Url(Buffer.from('foobar'))).toBe('Zm9vYmFy');
    expect(toBase64Url(Buffer.from('fooba'))).toBe('Zm9vYmE');
    expect(toBase64Url(Buffer.from('foob'))).toBe('Zm9vYg');
  });

  it('encodes only the bytes of a view, not its whole buffer', () => {
    const backing = new Uint8Array([1, 2, 3, 4, 5]);
    expect(toBase64Url(backing.subarray(1, 3))).toBe(toBase64Url(new Uint8Array([2, 3])));
  });
});

describe('fromBase64Url', () => {
  it('round-trips random byte strings of every length 0..100', () => {
    for (let n = 0; n <= 100; n++) {
      for (let k = 0; k < 5; k++) {
        const bytes = randomBytes(n);
        const text = toBase64Url(bytes);
        expect(text).toMatch(/^[A-Za-z0-9_-]*$/);
        const back = fromBase64Url(text);
        expect(back).not.toBeNull();
        expect(Buffer.compare(back!, bytes)).toBe(0);
      }
    }
  });

  it('decodes known values', () => {
    expect(fromBase64Url('')!.length).toBe(0);
    expect([...fromBase64Url('-_8')!]).toEqual([0xfb, 0xff]);
    expect(fromBase64Url('Zm9vYmFy')!.toString()).toBe('foobar');
    expect(fromBase64Url('Zm9vYg')!.toString()).toBe('foob');
  });

  it.each([
    ['padding', 'Zm9vYg=='],
    ['a single pad', 'Zm9vYmE='],
    ['padding only', '===='],
    ["'+'", 'ab+c'],
    ["'/'", 'ab/c'],
    ['standard base64 of 0xfbff', '+/8'],
    ['whitespace', 'Zm9v YmFy'],
    ['a newline', 'Zm9v\nYmFy'],
    ['a trailing newline', 'Zm9vYmFy\n'],
    ["'.'", 'Zm9v.YmFy'],
    ['non-ASCII', 'Zm9v\u00e9'],
    ['a length of 1 mod 4', 'A'],
    ['a length of 1 mod 4 (5 chars)', 'AAAAA'],
  ])('rejects %s', (_name, text) => {
    expect(fromBase64Url(text)).toBeNull();
  });

  it('rejects non-canonical encodings with stray bits in the last character', () => {
    // One byte: the 2nd char holds 2 data bits + 4 zero bits. 'AA' is canonical; 'AB'..'AP' are not.
    expect([...fromBase64Url('AA')!]).toEqual([0]);
    expect([...fromBase64Url('AQ')!]).toEqual([1]);
    for (const c of 'BCDEFGHIJKLMNOP') expect(fromBase64Url(`A${c}`)).toBeNull();
    // Two bytes: the 3rd char holds 4 data bits + 2 zero bits.
    expect([...fromBase64Url('AAA')!]).toEqual([0, 0]);
    for (const c of 'BCD') expect(fromBase64Url(`AA${c}`)).toBeNull();
    expect(fromBase64Url('-_9')).toBeNull(); // '-_8' is canonical
    expect(fromBase64Url('Zm9vYh')).toBeNull(); // 'Zm9vYg' is canonical
  });

  it('accepts exactly the canonical encoding of each byte', () => {
    for (let b = 0; b < 256; b++) {
      const text = toBase64Url(new Uint8Array([b]));
      expect([...fromBase64Url(text)!]).toEqual([b]);
    }
  });
});
