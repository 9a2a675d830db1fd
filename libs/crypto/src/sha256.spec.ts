import { createHash } from 'node:crypto';
import { isSha256Tagged, parseSha256, sha256Hex, sha256Tagged } from './sha256';

const EMPTY = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';
const ABC = 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad';
// FIPS 180-2 two-block message.
const TWO_BLOCK = '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1';

describe('sha256Hex / sha256Tagged', () => {
  it('gives the known answers', () => {
    expect(sha256Hex('')).toBe(EMPTY);
    expect(sha256Hex('abc')).toBe(ABC);
    expect(sha256Hex('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq')).toBe(TWO_BLOCK);
    expect(sha256Hex(new Uint8Array(0))).toBe(EMPTY);
    expect(sha256Hex(new Uint8Array([0x61, 0x62, 0x63]))).toBe(ABC);
    expect(sha256Hex(Buffer.from('abc'))).toBe(ABC);
  });

  it('hashes strings as UTF-8', () => {
    const s = 'h\u00e9llo \u20ac \ud83d\ude00';
    expect(sha256Hex(s)).toBe(sha256Hex(Buffer.from(s, 'utf8')));
    expect(sha256Hex(s)).toBe(createHash('sha256').update(Buffer.from(s, 'utf8')).digest('hex'));
    expect(sha256Hex(s)).not.toBe(sha256Hex(Buffer.from(s, 'latin1')));
  });

  it('returns 64 lowercase hex digits', () => {
    for (let i = 0; i < 50; i++) expect(sha256Hex(`message ${i}`)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('tags the hash as sha256:<hex>', () => {
    expect(sha256Tagged('')).toBe(`sha256:${EMPTY}`);
    expect(sha256Tagged('abc')).toBe(`sha256:${ABC}`);
    expect(sha256Tagged(new Uint8Array([0x61, 0x62, 0x63]))).toBe(`sha256:${ABC}`);
    expect(sha256Tagged('x')).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(isSha256Tagged(sha256Tagged('anything'))).toBe(true);
  });
});

describe('parseSha256', () => {
  it('accepts sha256:<hex> and returns the hex', () => {
    expect(parseSha256(`sha256:${ABC}`)).toBe(ABC);
    expect(parseSha256(sha256Tagged(''))).toBe(EMPTY);
  });

  it('accepts bare hex in any case and returns it lowercased', () => {
    expect(parseSha256(ABC)).toBe(ABC);
    expect(parseSha256(ABC.toUpperCase())).toBe(ABC);
    const mixed = [...ABC].map((c, i) => (i % 2 ? c.toUpperCase() : c)).join('');
    expect(mixed).not.toBe(ABC);
    expect(parseSha256(mixed)).toBe(ABC);
  });

  it('round-trips what sha256Tagged produces', () => {
    for (const m of ['', 'a', 'abc', '\u20ac']) expect(parseSha256(sha256Tagged(m))).toBe(sha256Hex(m));
  });

  it.each([
    ['63 hex digits', ABC.slice(1)],
    ['65 hex digits', ABC + 'a'],
    ['empty string', ''],
    ['tagged, 63 digits', `sha256:${ABC.slice(1)}`],
    ['tagged, 65 digits', `sha256:${ABC}0`],
    ['tagged, no digits', 'sha256:'],
    ['128 hex digits', ABC + ABC],
    ['a non-hex digit', 'g' + ABC.slice(1)],
    ['tagged with a non-hex digit', `sha256:${ABC.slice(0, 63)}z`],
    ['uppercase prefix', `SHA256:${ABC}`],
    ['mixed-case prefix', `Sha256:${ABC}`],
    ['another algorithm', `sha512:${ABC}`],
    ['no colon', `sha256${ABC}`],
    ['double prefix', `sha256:sha256:${ABC}`],
    ['leading space', ` ${ABC}`],
    ['trailing newline', `${ABC}\n`],
    ['trailing newline, tagged', `sha256:${ABC}\n`],
    ['0x prefix', `0x${ABC.slice(2)}`],
    ['base64 of a digest', Buffer.from(ABC, 'hex').toString('base64')],
  ])('rejects %s', (_name, value) => {
    expect(parseSha256(value)).toBeNull();
  });

  it.each([
    ['a number', 123],
    ['null', null],
    ['undefined', undefined],
    ['an object', { hex: ABC }],
    ['an array', [ABC]],
    ['a Buffer', Buffer.from(ABC, 'hex')],
    ['a boxed string', new String(ABC)],
  ])('rejects %s (not a string)', (_name, value) => {
    expect(parseSha256(value)).toBeNull();
  });
});

describe('isSha256Tagged', () => {
  it('accepts only sha256: with 64 lowercase hex digits', () => {
    expect(isSha256Tagged(`sha256:${ABC}`)).toBe(true);
    expect(isSha256Tagged(ABC)).toBe(false);
    expect(isSha256Tagged(`sha256:${ABC.toUpperCase()}`)).toBe(false);
    expect(isSha256Tagged(`SHA256:${ABC}`)).toBe(false);
    expect(isSha256Tagged(`sha256:${ABC.slice(1)}`)).toBe(false);
    expect(isSha256Tagged(`sha256:${ABC}\n`)).toBe(false);
    expect(isSha256Tagged(42)).toBe(false);
    expect(isSha256Tagged(null)).toBe(false);
  });
});
