import * as fs from 'node:fs';
import * as path from 'node:path';
import { canonicalBytes, canonicalizeJsonText, canonicalJson, CanonicalizationError } from './canonical-json';

// External RFC 8785 vectors (cyberphone/json-canonicalization). Read at runtime, never copied:
// if the folder is missing, readdirSync throws and this suite fails rather than skipping.
const VECTORS = path.resolve(__dirname, '../../../../shared/vectors');
const JCS_INPUT = path.join(VECTORS, 'jcs', 'input');
const JCS_OUTPUT = path.join(VECTORS, 'jcs', 'output');
const vectorFiles = fs
  .readdirSync(JCS_INPUT)
  .filter((f) => f.endsWith('.json'))
  .sort();

function expectCanonicalizationError(fn: () => unknown, path?: string): CanonicalizationError {
  let caught: unknown;
  try {
    fn();
  } catch (e) {
    caught = e;
  }
  expect(caught).toBeInstanceOf(CanonicalizationError);
  const err = caught as CanonicalizationError;
  expect(err.name).toBe('CanonicalizationError');
  if (path !== undefined) expect(err.path).toBe(path);
  return err;
}

/** n nested arrays around `leaf`: nest(2, 0) is [[0]]. */
function nest(n: number, leaf: unknown): unknown {
  let v = leaf;
  for (let i = 0; i < n; i++) v = [v];
  return v;
}

describe('canonicalJson: RFC 8785 vectors', () => {
  it('finds the vector files', () => {
    expect(vectorFiles.length).toBeGreaterThan(0);
    for (const f of vectorFiles) expect(fs.existsSync(path.join(JCS_OUTPUT, f))).toBe(true);
  });

  it.each(vectorFiles)('%s canonicalizes to exactly the bytes of the output file', (file) => {
    const input = JSON.parse(fs.readFileSync(path.join(JCS_INPUT, file), 'utf8'));
    // The output files hold the canonical form and nothing else: no trailing newline to strip.
    const expected = fs.readFileSync(path.join(JCS_OUTPUT, file));
    expect(expected[expected.length - 1]).not.toBe(0x0a);
    const actual = Buffer.from(canonicalJson(input), 'utf8');
    expect(actual.toString('hex')).toBe(expected.toString('hex'));
    expect(canonicalBytes(input).equals(expected)).toBe(true);
  });

  it.each(vectorFiles)('%s: canonicalizeJsonText agrees, and the canonical form is a fixed point', (file) => {
    const text = fs.readFileSync(path.join(JCS_INPUT, file), 'utf8');
    const expected = fs.readFileSync(path.join(JCS_OUTPUT, file), 'utf8');
    expect(canonicalizeJsonText(text)).toBe(expected);
    expect(canonicalizeJsonText(expected)).toBe(expected);
    const parsed = JSON.parse(text);
    expect(canonicalizeJsonText(JSON.stringify(parsed, null, 2))).toBe(expected);
    expect(canonicalizeJsonText(JSON.stringify(parsed))).toBe(expected);
  });
});

describe('canonicalJson: key ordering (RFC 8785 §3.2.3, UTF-16 code units)', () => {
  it('sorts property names by UTF-16 code units, not code points or locale', () => {
    const value = {
      '\u20ac': 'Euro Sign',
      '\r': 'Carriage Return',
      '\ufb33': 'Hebrew Letter Dalet With Dagesh',
      '1': 'One',
      '\ud83d\ude00': 'Emoji: Grinning Face',
      '\u0080': 'Control',
      '\u00f6': 'Latin Small Letter O With Diaeresis',
    };
    // U+1F600 is D83D DE00 in UTF-16, so it sorts before U+FB33 (it would sort after by code point).
    const expected =
      '{"\\r":"Carriage Return","1":"One","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis",' +
      '"\u20ac":"Euro Sign","\ud83d\ude00":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}';
    expect(canonicalJson(value)).toBe(expected);
    expect(canonicalBytes(value).equals(Buffer.from(expected, 'utf8'))).toBe(true);
  });

  it('sorts nested objects, keeps array order, and ignores insertion order', () => {
    expect(canonicalJson({ b: [3, 1, 2], a: { z: 1, y: { d: null, c: true } } })).toBe(
      '{"a":{"y":{"c":true,"d":null},"z":1},"b":[3,1,2]}',
    );
    expect(canonicalJson({ a: 1, b: 2 })).toBe(canonicalJson({ b: 2, a: 1 }));
    expect(canonicalJson({ B: 1, a: 2, A: 3, '': 4, aa: 5 })).toBe('{"":4,"A":3,"B":1,"a":2,"aa":5}');
  });
});

describe('canonicalJson: serialization of primitives', () => {
  it.each([
    [0, '0'],
    [-0, '0'],
    [1, '1'],
    [-1.5, '-1.5'],
    [4.5, '4.5'],
    [0.002, '0.002'],
    [0.000001, '0.000001'],
    [1e-7, '1e-7'],
    [1e21, '1e+21'],
    [1e20, '100000000000000000000'],
    // eslint-disable-next-line no-loss-of-precision -- the literal's rounding is what is under test
    [333333333.33333329, '333333333.3333333'],
    // eslint-disable-next-line no-loss-of-precision -- the literal's rounding is what is under test
    [9007199254740993, '9007199254740992'],
    [Number.MAX_VALUE, '1.7976931348623157e+308'],
    [Number.MIN_VALUE, '5e-324'],
  ])('number %p serializes as %s', (value, expected) => {
    expect(canonicalJson(value)).toBe(expected);
  });

  it('serializes literals and strings with minimal escaping', () => {
    expect(canonicalJson(null)).toBe('null');
    expect(canonicalJson(true)).toBe('true');
    expect(canonicalJson(false)).toBe('false');
    expect(canonicalJson('')).toBe('""');
    expect(canonicalJson('a"b\\c/d')).toBe('"a\\"b\\\\c/d"');
    expect(canonicalJson('\b\f\n\r\t')).toBe('"\\b\\f\\n\\r\\t"');
    expect(canonicalJson('\u0000\u001f')).toBe('"\\u0000\\u001f"');
    // Non-ASCII is emitted as is (UTF-8 in canonicalBytes), not \u-escaped.
    expect(canonicalJson('\u007f\u00e9\u2028\ud83d\ude00')).toBe('"\u007f\u00e9\u2028\ud83d\ude00"');
    expect(canonicalBytes('\u00e9').equals(Buffer.from([0x22, 0xc3, 0xa9, 0x22]))).toBe(true);
    expect(canonicalJson([])).toBe('[]');
    expect(canonicalJson({})).toBe('{}');
  });

  it('accepts objects with a null prototype', () => {
    const o = Object.create(null) as Record<string, unknown>;
    o.b = 1;
    o.a = [Object.assign(Object.create(null), { y: 2, x: 1 })];
    expect(canonicalJson(o)).toBe('{"a":[{"x":1,"y":2}],"b":1}');
  });

  it('drops object properties whose value is undefined, at any depth', () => {
    expect(canonicalJson({ a: undefined, b: 1 })).toBe('{"b":1}');
    expect(canonicalJson({ x: { a: undefined }, y: [{ c: undefined, d: 2 }] })).toBe('{"x":{},"y":[{"d":2}]}');
    expect(canonicalJson({ only: undefined })).toBe('{}');
  });
});

describe('canonicalJson: values outside the JSON data model are rejected', () => {
  it('rejects lone surrogates in strings', () => {
    for (const text of ['"\\ud800"', '"\\udfff"', '"a\\udc00b"', '"\\ude00\\ud83d"', '"\\ud83d"']) {
      const value = JSON.parse(text);
      expectCanonicalizationError(() => canonicalJson(value), '$');
      expectCanonicalizationError(() => canonicalizeJsonText(text));
    }
    expectCanonicalizationError(() => canonicalJson({ a: ['ok', JSON.parse('"\\ud800"')] }), '$.a[1]');
    // A well-formed pair is fine, and comes out as the raw character.
    expect(canonicalizeJsonText('"\\ud83d\\ude00"')).toBe('"\ud83d\ude00"');
  });

  it('rejects lone surrogates in property names', () => {
    expectCanonicalizationError(() => canonicalJson(JSON.parse('{"\\ud800":1}')));
    expectCanonicalizationError(() => canonicalizeJsonText('{"ok":{"\\udc00x":1}}'), '$.ok');
    expect(canonicalizeJsonText('{"\\ud83d\\ude00":1}')).toBe('{"\ud83d\ude00":1}');
  });

  it.each([
    ['NaN', NaN],
    ['Infinity', Infinity],
    ['-Infinity', -Infinity],
  ])('rejects %s, at top level and nested', (_name, n) => {
    expectCanonicalizationError(() => canonicalJson(n), '$');
    expectCanonicalizationError(() => canonicalJson({ a: [1, n] }), '$.a[1]');
    expectCanonicalizationError(() => canonicalJson({ a: n }), '$.a');
  });

  class Point {
    constructor(
      readonly x: number,
      readonly y: number,
    ) {}
  }

  it.each([
    ['a BigInt', () => 1n],
    ['a function', () => () => 1],
    ['a symbol', () => Symbol('s')],
    ['a Date', () => new Date(0)],
    ['a class instance', () => new Point(1, 2)],
    ['a Map', () => new Map([['a', 1]])],
    ['a Set', () => new Set([1])],
    ['a boxed number', () => new Number(1)],
    ['a boxed string', () => new String('s')],
    ['a RegExp', () => /x/],
    ['a Uint8Array', () => new Uint8Array([1])],
    ['a Buffer', () => Buffer.from('x')],
  ])('rejects %s, at top level and nested', (_name, make) => {
    expectCanonicalizationError(() => canonicalJson(make()), '$');
    expectCanonicalizationError(() => canonicalJson({ k: make() }), '$.k');
    expectCanonicalizationError(() => canonicalJson([0, make()]), '$[1]');
  });

  it('rejects undefined as a value, but drops it as an object property', () => {
    expectCanonicalizationError(() => canonicalJson(undefined), '$');
    expect(canonicalJson({ k: undefined })).toBe('{}');
  });

  it('rejects objects with a toJSON method instead of following it', () => {
    const withToJson = { toJSON: () => 'x' };
    expect(JSON.stringify(withToJson)).toBe('"x"');
    expectCanonicalizationError(() => canonicalJson(withToJson), '$.toJSON');
    expectCanonicalizationError(() => canonicalJson({ a: withToJson }), '$.a.toJSON');
  });

  it('rejects undefined array elements, including holes', () => {
    expectCanonicalizationError(() => canonicalJson([1, undefined, 3]), '$[1]');
    // eslint-disable-next-line no-sparse-arrays
    expectCanonicalizationError(() => canonicalJson([1, , 3]), '$[1]');
    expectCanonicalizationError(() => canonicalJson(new Array(2)), '$[0]');
    expectCanonicalizationError(() => canonicalJson({ a: { b: [undefined] } }), '$.a.b[0]');
  });

  it('accepts nesting up to 256 levels and rejects deeper nesting', () => {
    expect(canonicalJson(nest(256, 0))).toBe('['.repeat(256) + '0' + ']'.repeat(256));
    expect(canonicalJson(nest(256, []))).toBe('['.repeat(257) + ']'.repeat(257));
    expectCanonicalizationError(() => canonicalJson(nest(257, 0)));
    expectCanonicalizationError(() => canonicalJson(nest(258, [])));
    // Deep input fails with the CanonicalizationError, not a stack overflow.
    expectCanonicalizationError(() => canonicalJson(nest(100_000, 0)));

    let obj: unknown = 0;
    for (let i = 0; i < 256; i++) obj = { a: obj };
    expect(canonicalJson(obj)).toBe('{"a":'.repeat(256) + '0' + '}'.repeat(256));
    expectCanonicalizationError(() => canonicalJson({ a: obj }));

    const text = '['.repeat(300) + ']'.repeat(300);
    expectCanonicalizationError(() => canonicalizeJsonText(text));
  });

  it('reports the path of the offending value in the message', () => {
    const err = expectCanonicalizationError(() => canonicalJson({ a: { b: [0, 0, NaN] } }), '$.a.b[2]');
    expect(err.message).toContain('at $.a.b[2]');
  });
});

describe('canonicalizeJsonText', () => {
  it('gives the same canonical form for pretty-printed and compact text', () => {
    const value = {
      zeta: [1, 2.5, 'three', { nested: true, alpha: null }],
      alpha: { '\u00f6': 'x', b: -0, a: 1e30 },
      text: 'line\nbreak \u20ac \ud83d\ude00',
    };
    const compact = JSON.stringify(value);
    const pretty = JSON.stringify(value, null, 2);
    const tabbed = JSON.stringify(value, null, '\t').replace(/\n/g, '\r\n');
    expect(pretty).not.toBe(compact);
    const canonical = canonicalizeJsonText(compact);
    expect(canonicalizeJsonText(pretty)).toBe(canonical);
    expect(canonicalizeJsonText(tabbed)).toBe(canonical);
    expect(canonical).toBe(
      '{"alpha":{"a":1e+30,"b":0,"\u00f6":"x"},"text":"line\\nbreak \u20ac \ud83d\ude00",' +
        '"zeta":[1,2.5,"three",{"alpha":null,"nested":true}]}',
    );
  });

  it('normalizes escapes and number spellings in the source text', () => {
    expect(canonicalizeJsonText('{ "b" : 1.0E2 , "a" : "\\u0041\\/" }')).toBe('{"a":"A/","b":100}');
    expect(canonicalizeJsonText(' [ 1e-7 , 0.10 , -0.0 ] ')).toBe('[1e-7,0.1,0]');
  });

  it('throws SyntaxError on text that is not JSON', () => {
    expect(() => canonicalizeJsonText('{a:1}')).toThrow(SyntaxError);
    expect(() => canonicalizeJsonText('')).toThrow(SyntaxError);
    expect(() => canonicalizeJsonText('NaN')).toThrow(SyntaxError);
  });
});
