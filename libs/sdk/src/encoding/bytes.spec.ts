import { randomBytes } from 'node:crypto';
import { equalBytes, fromBase64, fromBase64Url, fromHex, toBase64, toBase64Url, toHex } from './bytes';

describe('byte encodings (no Buffer in the SDK; Buffer is the reference here)', () => {
  it('round-trips 0..70 random bytes through hex, base64 and base64url like Buffer', () => {
    for (let n = 0; n <= 70; n++) {
      const bytes = randomBytes(n);
      expect(toHex(bytes)).toBe(bytes.toString('hex'));
      expect(toBase64(bytes)).toBe(bytes.toString('base64'));
      expect(toBase64Url(bytes)).toBe(bytes.toString('base64url'));
      expect(Buffer.from(fromHex(bytes.toString('hex'))!).equals(bytes)).toBe(true);
      expect(Buffer.from(fromBase64(bytes.toString('base64'))!).equals(bytes)).toBe(true);
      expect(Buffer.from(fromBase64(bytes.toString('base64').replace(/=+$/, ''))!).equals(bytes)).toBe(true);
      expect(Buffer.from(fromBase64Url(bytes.toString('base64url'))!).equals(bytes)).toBe(true);
    }
  });

  it('decodes strictly: padding, foreign characters and stray low bits are refused', () => {
    expect(fromBase64Url('AA==')).toBeNull();
    expect(fromBase64Url('A+/B')).toBeNull();
    expect(fromBase64Url('AB')).toBeNull(); // 'B' leaves low bits set: non-canonical for one byte
    expect(fromBase64Url('AQ')).toEqual(Uint8Array.of(1));
    expect(fromBase64Url('A')).toBeNull();
    expect(fromBase64('AQ=')).toBeNull();
    expect(fromBase64('A-_B')).toBeNull();
    expect(fromBase64('AQ==')).toEqual(Uint8Array.of(1));
    expect(fromHex('abc')).toBeNull();
    expect(fromHex('zz')).toBeNull();
    expect(fromHex('ABcd')).toEqual(Uint8Array.of(0xab, 0xcd));
  });

  it('compares bytes', () => {
    expect(equalBytes(Uint8Array.of(1, 2), Uint8Array.of(1, 2))).toBe(true);
    expect(equalBytes(Uint8Array.of(1, 2), Uint8Array.of(1, 3))).toBe(false);
    expect(equalBytes(Uint8Array.of(1), Uint8Array.of(1, 0))).toBe(false);
  });
});
