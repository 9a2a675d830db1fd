/**
 * RFC 8785 (JCS) canonical JSON, written for browsers and Node alike. The server uses the
 * `canonicalize` package behind a JSON data-model check; this is the same rule in one pass:
 * only what plain JSON.parse can yield, with well-formed Unicode. Lone surrogates, NaN,
 * Infinity, undefined array elements and non-plain objects are rejected, never serialized.
 * Object properties whose value is `undefined` are dropped, as in JSON.stringify.
 *
 * JCS serializes strings and numbers exactly as ECMAScript's JSON.stringify does, and sorts
 * property names by UTF-16 code units, which is what Array.prototype.sort does by default.
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

// With the `u` flag a well-formed surrogate pair is one code point, so this finds only lone ones.
const LONE_SURROGATE = /\p{Surrogate}/u;
const MAX_DEPTH = 256;

function serialize(value: unknown, path: string, depth: number): string {
  if (depth > MAX_DEPTH) throw new CanonicalizationError(`nesting deeper than ${MAX_DEPTH} levels`, path);
  switch (typeof value) {
    case 'string':
      if (LONE_SURROGATE.test(value)) throw new CanonicalizationError('lone surrogate in string', path);
      return JSON.stringify(value);
    case 'number':
      if (!Number.isFinite(value)) throw new CanonicalizationError(`${value} is not a JSON number`, path);
      return JSON.stringify(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object': {
      if (value === null) return 'null';
      if (Array.isArray(value)) {
        const items: string[] = [];
        for (let i = 0; i < value.length; i++) {
          if (value[i] === undefined) throw new CanonicalizationError('undefined array element', `${path}[${i}]`);
          items.push(serialize(value[i], `${path}[${i}]`, depth + 1));
        }
        return `[${items.join(',')}]`;
      }
      // A plain object: its prototype is null or an Object.prototype (of any realm, e.g. an iframe's).
      const proto = Object.getPrototypeOf(value);
      if (proto !== null && Object.getPrototypeOf(proto) !== null) {
        throw new CanonicalizationError(`${proto?.constructor?.name ?? 'object'} is not a plain JSON object`, path);
      }
      const record = value as Record<string, unknown>;
      const members: string[] = [];
      for (const key of Object.keys(record).sort()) {
        if (LONE_SURROGATE.test(key)) throw new CanonicalizationError('lone surrogate in property name', path);
        if (record[key] === undefined) continue;
        members.push(`${JSON.stringify(key)}:${serialize(record[key], `${path}.${key}`, depth + 1)}`);
      }
      return `{${members.join(',')}}`;
    }
    default:
      throw new CanonicalizationError(`${typeof value} is not a JSON value`, path);
  }
}

/** The RFC 8785 canonical form of a JSON value. Throws CanonicalizationError. */
export function canonicalJson(value: unknown): string {
  return serialize(value, '$', 0);
}
