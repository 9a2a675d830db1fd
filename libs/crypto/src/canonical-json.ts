import canonicalize from 'canonicalize';

/**
 * RFC 8785 (JCS) canonical JSON.
 *
 * We use `canonicalize` 2.1.0: 4.x is ESM-only and 5.x needs Node 22, and 2.1.0 passes every
 * RFC 8785 vector. It does let lone surrogates through (JSON.stringify escapes them as \udXXX),
 * and it would follow `toJSON` on non-JSON objects, so we first check that the value is in
 * the JSON data model: what plain JSON.parse can yield, with well-formed Unicode strings.
 * Object properties whose value is `undefined` are dropped, as in JSON.stringify.
 */
export class CanonicalizationError extends Error {
  constructor(
    message: string,
    readonly path: string,
  ) {
    super(`${message} at ${path}`);
    this.name = 'CanonicalizationError';
  }
}

// String.prototype.isWellFormed is ES2024 and tsconfig's lib is ES2023. With the `u` flag a
// well-formed surrogate pair is one astral code point, so this matches only lone surrogates.
const LONE_SURROGATE = /\p{Surrogate}/u;
const isWellFormed = (s: string): boolean => !LONE_SURROGATE.test(s);

function assertJsonValue(value: unknown, path: string, depth: number): void {
  if (depth > 256) throw new CanonicalizationError('nesting deeper than 256 levels', path);
  switch (typeof value) {
    case 'string':
      if (!isWellFormed(value)) throw new CanonicalizationError('lone surrogate in string', path);
      return;
    case 'number':
      if (!Number.isFinite(value)) throw new CanonicalizationError(`${value} is not a JSON number`, path);
      return;
    case 'boolean':
      return;
    case 'object': {
      if (value === null) return;
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) {
          if (value[i] === undefined) throw new CanonicalizationError('undefined array element', `${path}[${i}]`);
          assertJsonValue(value[i], `${path}[${i}]`, depth + 1);
        }
        return;
      }
      const proto = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) {
        throw new CanonicalizationError(`${proto?.constructor?.name ?? 'object'} is not a plain JSON object`, path);
      }
      for (const [key, child] of Object.entries(value)) {
        if (!isWellFormed(key)) throw new CanonicalizationError('lone surrogate in property name', path);
        if (child !== undefined) assertJsonValue(child, `${path}.${key}`, depth + 1);
      }
      return;
    }
    default:
      throw new CanonicalizationError(`${typeof value} is not a JSON value`, path);
  }
}

/** The RFC 8785 canonical form of a JSON value, as a string. Throws CanonicalizationError. */
export function canonicalJson(value: unknown): string {
  assertJsonValue(value, '$', 0);
  return canonicalize(value) as string;
}

/** The canonical form as UTF-8 bytes: what gets hashed and signed. */
export function canonicalBytes(value: unknown): Buffer {
  return Buffer.from(canonicalJson(value), 'utf8');
}

/**
 * Parse JSON text and canonicalize it. JSON.parse itself accepts lone-surrogate escapes
 * ("\ud800"); canonicalJson rejects them.
 */
export function canonicalizeJsonText(text: string): string {
  return canonicalJson(JSON.parse(text));
}
