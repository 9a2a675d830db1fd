import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { runInNewContext } from 'node:vm';
import { canonicalJson as serverCanonicalJson } from '@app/crypto';
import { canonicalJson, CanonicalizationError } from './canonical-json';

// RFC 8785 vectors, read in place; a missing folder fails the suite.
const VECTORS = path.resolve(__dirname, '../../../../../shared/vectors/jcs');
const files = fs.readdirSync(path.join(VECTORS, 'input')).filter((f) => f.endsWith('.json')).sort();

describe('SDK canonicalJson', () => {
  it('finds the RFC 8785 vectors', () => {
    expect(files.length).toBeGreaterThan(0);
  });

  it.each(files)('%s canonicalizes to exactly the bytes of the output file', (file) => {
    const input = JSON.parse(fs.readFileSync(path.join(VECTORS, 'input', file), 'utf8'));
    const expected = fs.readFileSync(path.join(VECTORS, 'output', file));
    expect(Buffer.from(canonicalJson(input), 'utf8').toString('hex')).toBe(expected.toString('hex'));
  });

  it('rejects what the server rejects: lone surrogates, NaN, Infinity, undefined elements, non-plain objects', () => {
    const bad: unknown[] = [
      '\ud800',
      { ['\udc00']: 1 },
      { a: 'x\udbffy' },
      NaN,
      [Infinity],
      { n: -Infinity },
      [1, undefined],
      new Date(0),
      { m: new Map() },
      { f: () => 1 },
      BigInt(1),
      Symbol('s'),
      undefined,
    ];
    for (const value of bad) {
      expect(() => canonicalJson(value)).toThrow(CanonicalizationError);
      expect(() => serverCanonicalJson(value)).toThrow();
    }
  });

  it('rejects nesting deeper than 256 levels, as the server does', () => {
    let deep: unknown = 0;
    for (let i = 0; i < 257; i++) deep = [deep];
    expect(() => canonicalJson(deep)).toThrow(/deeper than 256/);
    expect(() => serverCanonicalJson(deep)).toThrow(/deeper than 256/);
    expect(canonicalJson((deep as unknown[])[0])).toBe(serverCanonicalJson((deep as unknown[])[0]));
  });

  it('accepts plain objects and arrays from another realm (an iframe, a vm context)', () => {
    const foreign = runInNewContext('({ b: [1, { c: "x" }], a: null })');
    expect(Object.getPrototypeOf(foreign)).not.toBe(Object.prototype);
    expect(canonicalJson(foreign)).toBe('{"a":null,"b":[1,{"c":"x"}]}');
    expect(() => canonicalJson(runInNewContext('new Date(0)'))).toThrow(CanonicalizationError);
    class Point {
      x = 1;
    }
    expect(() => canonicalJson(new Point())).toThrow(CanonicalizationError);
  });

  it('keeps well-formed astral characters and drops undefined properties', () => {
    expect(canonicalJson({ b: undefined, a: '😀', c: null })).toBe('{"a":"😀","c":null}');
    expect(canonicalJson(Object.create(null))).toBe('{}');
  });

  it('agrees with the server on 500 random JSON values', () => {
    const rnd = () => randomBytes(4).readUInt32LE() / 2 ** 32;
    const pick = <T>(xs: T[]): T => xs[Math.floor(rnd() * xs.length)];
    const chars = ['a', 'Z', '€', '😀', '\u0000', '\u001f', '"', '\\', '\u2028', 'é', 'ß', '\ufffd', '\t', '\n'];
    const str = () => Array.from({ length: Math.floor(rnd() * 6) }, () => pick(chars)).join('');
    const num = () => pick([0, -0, 1, -1, 1e21, 1e-7, 123.456, 2 ** 53, -(2 ** 31), rnd() * 1e10, 5e-324, 1.7976931348623157e308]);
    const gen = (depth: number): unknown => {
      const kind = depth > 3 ? Math.floor(rnd() * 4) : Math.floor(rnd() * 6);
      if (kind === 0) return str();
      if (kind === 1) return num();
      if (kind === 2) return pick([true, false, null]);
      if (kind === 3) return Math.floor(rnd() * 1000);
      if (kind === 4) return Array.from({ length: Math.floor(rnd() * 4) }, () => gen(depth + 1));
      return Object.fromEntries(Array.from({ length: Math.floor(rnd() * 5) }, () => [str(), gen(depth + 1)]));
    };
    for (let i = 0; i < 500; i++) {
      const value = gen(0);
      expect(canonicalJson(value)).toBe(serverCanonicalJson(value));
    }
  });
});
