import { randomBytes } from 'node:crypto';
import { decryptSecret, DecryptionError, encryptSecret } from './secret-box';

const kek = randomBytes(32);
const AD = 'key-id-1';
const plaintext = Buffer.from('the quick brown fox jumps over the lazy dog: PRIVATE KEY MATERIAL 0123456789');

function parts(sealed: string): [string, Buffer, Buffer, Buffer] {
  const [v, iv, tag, ct] = sealed.split('.');
  return [v, Buffer.from(iv, 'base64url'), Buffer.from(tag, 'base64url'), Buffer.from(ct, 'base64url')];
}
function join(v: string, iv: Buffer, tag: Buffer, ct: Buffer): string {
  return [v, iv.toString('base64url'), tag.toString('base64url'), ct.toString('base64url')].join('.');
}
function flipBit(bytes: Buffer, bit: number): Buffer {
  const copy = Buffer.from(bytes);
  copy[bit >> 3] ^= 1 << (bit & 7);
  return copy;
}
function expectDecryptionError(fn: () => unknown): void {
  let caught: unknown;
  try {
    fn();
  } catch (e) {
    caught = e;
  }
  expect(caught).toBeInstanceOf(DecryptionError);
  expect((caught as Error).name).toBe('DecryptionError');
}

describe('encryptSecret / decryptSecret', () => {
  it('round-trips', () => {
    const sealed = encryptSecret(kek, plaintext, AD);
    const opened = decryptSecret(kek, sealed, AD);
    expect(Buffer.isBuffer(opened)).toBe(true);
    expect(opened.equals(plaintext)).toBe(true);
  });

  it('round-trips empty, binary and large plaintexts, and Unicode associated data', () => {
    for (const pt of [Buffer.alloc(0), randomBytes(1), randomBytes(48), randomBytes(100_000), new Uint8Array([0, 255])]) {
      const ad = 'k\u00e9y \ud83d\udd11';
      expect(decryptSecret(kek, encryptSecret(kek, pt, ad), ad).equals(Buffer.from(pt))).toBe(true);
    }
    expect(decryptSecret(kek, encryptSecret(kek, plaintext, ''), '').equals(plaintext)).toBe(true);
  });

  it('produces v1.<iv>.<tag>.<ciphertext> in base64url with a 12-byte IV and a 16-byte tag', () => {
    const sealed = encryptSecret(kek, plaintext, AD);
    expect(sealed).toMatch(/^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/);
    const [v, iv, tag, ct] = parts(sealed);
    expect(v).toBe('v1');
    expect(iv.length).toBe(12);
    expect(tag.length).toBe(16);
    expect(ct.length).toBe(plaintext.length); // GCM is a stream mode
  });

  it('uses a random IV: encrypting the same plaintext twice gives different results', () => {
    const seen = new Set<string>();
    const ivs = new Set<string>();
    for (let i = 0; i < 50; i++) {
      const sealed = encryptSecret(kek, plaintext, AD);
      seen.add(sealed);
      ivs.add(parts(sealed)[1].toString('hex'));
      expect(decryptSecret(kek, sealed, AD).equals(plaintext)).toBe(true);
    }
    expect(seen.size).toBe(50);
    expect(ivs.size).toBe(50);
  });

  it('does not reveal the plaintext in the sealed string', () => {
    const sealed = encryptSecret(kek, plaintext, AD);
    const sealedBytes = Buffer.from(sealed);
    const decodedParts = Buffer.concat(parts(sealed).slice(1) as Buffer[]);
    expect(sealed).not.toContain(plaintext.toString('utf8'));
    expect(sealed).not.toContain('PRIVATE KEY');
    expect(sealed).not.toContain(plaintext.toString('base64url'));
    expect(sealed).not.toContain(plaintext.toString('base64'));
    expect(sealed.toLowerCase()).not.toContain(plaintext.toString('hex'));
    expect(sealedBytes.includes(plaintext)).toBe(false);
    expect(decodedParts.includes(plaintext)).toBe(false);
    expect(decodedParts.includes(plaintext.subarray(0, 16))).toBe(false);
  });

  it('rejects a wrong key with DecryptionError', () => {
    const sealed = encryptSecret(kek, plaintext, AD);
    expectDecryptionError(() => decryptSecret(randomBytes(32), sealed, AD));
    expectDecryptionError(() => decryptSecret(flipBit(kek, 0), sealed, AD));
    expectDecryptionError(() => decryptSecret(flipBit(kek, 255), sealed, AD));
  });

  it('rejects wrong associated data with DecryptionError (a blob moved to another record)', () => {
    const sealed = encryptSecret(kek, plaintext, AD);
    expectDecryptionError(() => decryptSecret(kek, sealed, 'key-id-2'));
    expectDecryptionError(() => decryptSecret(kek, sealed, ''));
    expectDecryptionError(() => decryptSecret(kek, sealed, AD + ' '));
    expectDecryptionError(() => decryptSecret(kek, sealed, AD.toUpperCase()));
    const noAd = encryptSecret(kek, plaintext, '');
    expectDecryptionError(() => decryptSecret(kek, noAd, AD));
  });

  it('rejects any single flipped bit in the ciphertext, tag or IV with DecryptionError', () => {
    const sealed = encryptSecret(kek, randomBytes(24), AD);
    const [v, iv, tag, ct] = parts(sealed);
    for (let bit = 0; bit < ct.length * 8; bit++) expectDecryptionError(() => decryptSecret(kek, join(v, iv, tag, flipBit(ct, bit)), AD));
    for (let bit = 0; bit < tag.length * 8; bit++) expectDecryptionError(() => decryptSecret(kek, join(v, iv, flipBit(tag, bit), ct), AD));
    for (let bit = 0; bit < iv.length * 8; bit++) expectDecryptionError(() => decryptSecret(kek, join(v, flipBit(iv, bit), tag, ct), AD));
    // Unchanged parts still decrypt, so the failures above come from the tampering.
    expect(decryptSecret(kek, join(v, iv, tag, ct), AD).length).toBe(24);
  });

  it('rejects truncated, extended or swapped ciphertexts with DecryptionError', () => {
    const sealed = encryptSecret(kek, plaintext, AD);
    const [v, iv, tag, ct] = parts(sealed);
    expectDecryptionError(() => decryptSecret(kek, join(v, iv, tag, ct.subarray(1)), AD));
    expectDecryptionError(() => decryptSecret(kek, join(v, iv, tag, ct.subarray(0, ct.length - 1)), AD));
    expectDecryptionError(() => decryptSecret(kek, join(v, iv, tag, Buffer.concat([ct, Buffer.from([0])])), AD));
    expectDecryptionError(() => decryptSecret(kek, join(v, iv, tag, Buffer.alloc(0)), AD));
    // Parts of two different encryptions do not mix.
    const [, iv2, tag2, ct2] = parts(encryptSecret(kek, plaintext, AD));
    expectDecryptionError(() => decryptSecret(kek, join(v, iv2, tag, ct), AD));
    expectDecryptionError(() => decryptSecret(kek, join(v, iv, tag2, ct), AD));
    expectDecryptionError(() => decryptSecret(kek, join(v, iv, tag, ct2), AD));
  });

  it('rejects malformed sealed strings with DecryptionError', () => {
    const sealed = encryptSecret(kek, plaintext, AD);
    const [, ivText, tagText, ctText] = sealed.split('.');
    const [, iv, tag, ct] = parts(sealed);
    const malformed = [
      '',
      'v1',
      'v1...',
      'v1.' + ivText,
      `v1.${ivText}.${tagText}`,
      `v1.${ivText}.${tagText}.${ctText}.`,
      `v1.${ivText}.${tagText}.${ctText}.extra`,
      `v2.${ivText}.${tagText}.${ctText}`,
      `V1.${ivText}.${tagText}.${ctText}`,
      `.${ivText}.${tagText}.${ctText}`,
      `${ivText}.${tagText}.${ctText}`,
      `v1.${tagText}.${ivText}.${ctText}`, // parts in the wrong order
      join('v1', iv.subarray(0, 11), tag, ct), // 11-byte IV
      join('v1', Buffer.concat([iv, Buffer.from([0])]), tag, ct), // 13-byte IV
      join('v1', iv, tag.subarray(0, 12), ct), // truncated tag
      join('v1', iv, Buffer.concat([tag, Buffer.from([0])]), ct),
      `v1.${ivText}.${tagText}.${ctText}==`, // padding
      `v1.${ivText}=.${tagText}.${ctText}`,
      `v1.${ivText}.${tagText}.${ctText}!!`, // characters outside base64url
      `v1.${ivText}.${tagText}!.${ctText}`,
      `v1.${ivText} .${tagText}.${ctText}`,
      `v1.${ivText}.${tagText}.${ctText}\n`,
      `v1.${ivText}.${tagText}.+${ctText}`, // standard-base64 characters
      `v1.${ivText}.${tagText}.${ctText}/`,
      'not a sealed secret at all',
    ];
    for (const text of malformed) {
      expect(text).not.toBe(sealed);
      expectDecryptionError(() => decryptSecret(kek, text, AD));
    }
  });

  it('requires a 32-byte key encryption key for both operations', () => {
    const sealed = encryptSecret(kek, plaintext, AD);
    for (const n of [0, 16, 24, 31, 33, 64]) {
      expect(() => encryptSecret(randomBytes(n), plaintext, AD)).toThrow('KEY_ENCRYPTION_KEY must be 32 bytes');
      expect(() => decryptSecret(randomBytes(n), sealed, AD)).toThrow('KEY_ENCRYPTION_KEY must be 32 bytes');
    }
  });
});
