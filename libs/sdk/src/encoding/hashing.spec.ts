import { createHash, randomBytes } from 'node:crypto';
import { digestContent } from '@app/notary';
import { canonicalHash, hashContent, normalizeSha256, sha256Hex } from './hashing';

describe('hashing', () => {
  it('sha256Hex matches node:crypto for strings and bytes', () => {
    for (const input of ['', 'abc', 'é😀', randomBytes(1000)]) {
      expect(sha256Hex(input)).toBe(createHash('sha256').update(input).digest('hex'));
    }
  });

  it('hashContent gives the dataset_hash the service computes at issuance', () => {
    const samples = [
      '{"b":1,"a":[1,2,{"z":null}]}',
      JSON.stringify({ b: 1, a: [1, 2, { z: null }] }, null, 4),
      'id,label\n1,cat\n2,dog\n',
      'plain text é 😀',
      '',
      '42',
      '"a string"',
      '\ufeff{"bom":true}',
      '1e400x',
      '[1.0, 2.50, -0]',
    ];
    for (const content of samples) {
      const expected = digestContent(content).dataset_hash;
      expect(hashContent(content)).toBe(expected);
      // The same content as a file's bytes.
      expect(hashContent(new Uint8Array(Buffer.from(content, 'utf8')))).toBe(expected);
    }
  });

  it('hashes bytes that are not UTF-8 as they are, and refuses a lone surrogate like the service', () => {
    const bytes = Uint8Array.of(0xff, 0xfe, 0x00, 0x41);
    expect(hashContent(bytes)).toBe(`sha256:${createHash('sha256').update(bytes).digest('hex')}`);
    expect(() => hashContent('x\ud800')).toThrow(TypeError);
    expect(() => digestContent('x\ud800')).toThrow();
  });

  it('canonicalHash and normalizeSha256', () => {
    expect(canonicalHash({ b: 2, a: 1 })).toBe(`sha256:${createHash('sha256').update('{"a":1,"b":2}').digest('hex')}`);
    const hex = 'ab'.repeat(32);
    expect(normalizeSha256(`sha256:${hex}`)).toBe(`sha256:${hex}`);
    expect(normalizeSha256(hex.toUpperCase())).toBe(`sha256:${hex}`);
    expect(normalizeSha256(`sha256:${hex.toUpperCase()}`)).toBeNull();
    expect(normalizeSha256('sha256:abc')).toBeNull();
    expect(normalizeSha256(42)).toBeNull();
  });
});
