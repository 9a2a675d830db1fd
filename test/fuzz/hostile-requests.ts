import fc from 'fast-check';

/**
 * Request generators for the hostile-input fuzz suite: from an operation of the served OpenAPI
 * document, a request that is well formed, or mutated (a field dropped, added, of the wrong type),
 * or hostile (huge strings, deep nesting, lone surrogates, NUL bytes, 1e309, prototype-pollution
 * keys, `../` and `%00` in path ids, bad Authorization / Idempotency-Key / Content-Type headers).
 */

type Schema = Record<string, unknown>;
interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  schema?: Schema;
}
export interface Operation {
  operationId: string;
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content: Record<string, { schema: Schema }> };
}
export interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
}
export interface FuzzOperation {
  method: string;
  path: string;
  op: Operation;
}
export interface FuzzRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  /** Raw body text; undefined: no body. */
  payload?: string;
}
/** What the generators may use: the fresh organization's key and ids of resources it owns. */
export interface FuzzContext {
  key: string;
  knownIds: string[];
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

export function operationsOf(doc: OpenApiDocument): FuzzOperation[] {
  const ops: FuzzOperation[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) if (METHODS.includes(method)) ops.push({ method: method.toUpperCase(), path, op });
  }
  return ops;
}

/** JSON text spliced into a body as is: what JSON.stringify cannot write (1e309, 10^5 levels of nesting, `__proto__` keys). */
class Raw {
  constructor(readonly text: string) {}
}

/** Serializes a generated value; Raw fragments go in verbatim, own `__proto__` keys are written as keys. */
export function toJsonText(value: unknown): string {
  if (value instanceof Raw) return value.text;
  if (value === undefined) return 'null';
  if (Array.isArray(value)) return `[${value.map(toJsonText).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value)
      .map((k) => `${JSON.stringify(k)}:${toJsonText((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** An object with the same own keys plus `key`, set as an own property even for `__proto__`. */
const withKey = (obj: Record<string, unknown>, key: string, value: unknown): Record<string, unknown> => {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(obj)) Object.defineProperty(out, k, { value: obj[k], enumerable: true, writable: true, configurable: true });
  Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  return out;
};
const withoutKey = (obj: Record<string, unknown>, key: string): Record<string, unknown> => {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(obj)) if (k !== key) Object.defineProperty(out, k, { value: obj[k], enumerable: true, writable: true, configurable: true });
  return out;
};

const deep = (open: string, leaf: string, close: string) => (n: number) => new Raw(open.repeat(n) + leaf + close.repeat(n));
const DEPTHS = [64, 1_000, 10_000, 100_000];
const POLLUTION_KEYS = ['__proto__', 'constructor', 'prototype'];

const hostileStrings = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udfffy',
  '\ufeff',
  '../../../etc/passwd',
  '..\\..\\windows\\win.ini',
  '%00',
  '%2e%2e%2f',
  '\u202egnp.exe',
  '𝕊𝕚𝕘𝕚𝕝 🔏',
  "' OR '1'='1",
  '"; DROP TABLE events; --',
  '${jndi:ldap://x/a}',
  '<script>alert(1)</script>',
  '__proto__',
  'constructor',
  'prototype',
  '\r\nX-Injected: 1',
  'NaN',
  'Infinity',
  '-1',
  '1e309',
  'null',
  '[]',
  '{}',
  '0x10',
  '١٢٣',
  'txn_00000000000000000000000000000000',
];

export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...hostileStrings) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.constantFrom(10_000, 300_000, 2_000_000).map((n) => 'x'.repeat(n)) },
  { weight: 1, arbitrary: fc.constantFrom(...DEPTHS.slice(0, 3)).map((n) => '['.repeat(n) + ']'.repeat(n)) },
);

/** A value of any JSON type (and some outside JSON), none of which an endpoint schema expects where it lands. */
export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: hostileString },
  {
    weight: 3,
    arbitrary: fc.constantFrom<unknown>(
      new Raw('1e309'),
      new Raw('-1e309'),
      new Raw('1e-400'),
      new Raw('123456789012345678901234567890'),
      new Raw('-0'),
      new Raw('"\\ud800"'),
      new Raw('"\\udc00\\ud800"'),
      new Raw('"\\u0000"'),
      new Raw('{"__proto__":{"polluted":true}}'),
      new Raw('{"constructor":{"prototype":{"polluted":true}}}'),
      new Raw('{"prototype":{"polluted":true}}'),
      new Raw('{"a":1,"a":2}'),
      null,
      true,
      0,
      -1,
      2 ** 53 + 2,
      0.5,
      [],
      {},
    ),
  },
  { weight: 2, arbitrary: fc.constantFrom(...DEPTHS).chain((n) => fc.constantFrom(deep('[', '', ']')(n), deep('{"a":', '1', '}')(n))) },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 1, arbitrary: fc.array(fc.constant('x'), { minLength: 0, maxLength: 3 }).map((a) => (a.length ? Array(50_000).fill(a[0]) : [])) },
);

const ref = (doc: OpenApiDocument, schema: Schema): Schema =>
  typeof schema.$ref === 'string' ? ref(doc, doc.components.schemas[schema.$ref.replace('#/components/schemas/', '')]) : schema;

const ISO_IN = (ms: number) => new Date(Date.now() + ms).toISOString();

/** Times JavaScript's Date reads but PostgreSQL refuses, or off the calendar: each was once a 500 here. */
const EDGE_TIMES = ['2026-02-30T00:00:00Z', '0000-01-01T00:00:00Z', '0001-01-01T00:30:00+01:00', '9999-12-31T23:59:59-01:00', '+275760-09-13T00:00:00.000Z', '1', 'March 7', '2026-11-21T10:00:00.000Z'];
const timeValue = fc.oneof({ weight: 4, arbitrary: fc.integer({ min: -3_600_000, max: 30 * 86_400_000 }).map(ISO_IN) }, { weight: 1, arbitrary: fc.constantFrom(...EDGE_TIMES) });
/** A cursor shaped like the service's (base64url JSON [time, id]) but forged: its parts are edge times and hostile ids. */
const forgedCursor = fc
  .tuple(fc.oneof(fc.constantFrom(...EDGE_TIMES), fc.constant(new Date().toISOString())), fc.oneof(fc.constantFrom('txn_1', 'a\u0000b', '', 'z'.repeat(65)), hostileString.filter((x) => x.length < 50)))
  .map((pair) => Buffer.from(JSON.stringify(pair)).toString('base64url'));

/** A value the schema accepts (as far as a generator can know: patterns, bounds, required fields). */
export function schemaValue(doc: OpenApiDocument, input: Schema | undefined, name = '', depth = 0): fc.Arbitrary<unknown> {
  if (!input) return fc.jsonValue({ maxDepth: 2 });
  const schema = ref(doc, input);
  const options = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  let arb: fc.Arbitrary<unknown>;
  if (options) arb = fc.oneof(...options.map((s) => schemaValue(doc, s, name, depth + 1)));
  else if (Array.isArray(schema.enum)) arb = fc.constantFrom(...(schema.enum as unknown[]));
  else {
    switch (schema.type) {
      case 'string': {
        const min = (schema.minLength as number | undefined) ?? 0;
        const max = Math.max(min, Math.min((schema.maxLength as number | undefined) ?? 24, 24));
        if (name === 'url') arb = fc.constantFrom('http://127.0.0.1:9/hook', 'https://127.0.0.1:9/h?x=1', 'http://[::1]:9/', 'ftp://127.0.0.1/', 'http://no-such-host.invalid/');
        else if (name === 'currency') arb = fc.constantFrom('USD', 'EUR', 'XXX', 'usd');
        else if (name === 'cursor') arb = forgedCursor;
        else if (schema.format === 'date-time' || /T\(\?:/.test(String(schema.pattern ?? ''))) arb = timeValue;
        else if (schema.format === 'uuid') arb = fc.uuid();
        else if (typeof schema.pattern === 'string') arb = fc.stringMatching(new RegExp(schema.pattern as string));
        else arb = fc.string({ minLength: min, maxLength: max });
        break;
      }
      case 'integer':
        arb = fc.integer({ min: (schema.minimum as number | undefined) ?? -10, max: (schema.maximum as number | undefined) ?? 100_000 });
        break;
      case 'number':
        arb = fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 });
        break;
      case 'boolean':
        arb = fc.boolean();
        break;
      case 'array':
        arb =
          depth > 4
            ? fc.constant([])
            : fc.array(schemaValue(doc, schema.items as Schema | undefined, name, depth + 1), {
                minLength: (schema.minItems as number | undefined) ?? 0,
                maxLength: Math.max((schema.minItems as number | undefined) ?? 0, Math.min((schema.maxItems as number | undefined) ?? 3, 3)),
              });
        break;
      case 'object': {
        const props = (schema.properties as Record<string, Schema> | undefined) ?? {};
        const required = (schema.required as string[] | undefined) ?? [];
        const record = fc.record(
          Object.fromEntries(Object.entries(props).map(([k, s]) => [k, depth > 4 ? fc.constant(null) : schemaValue(doc, s, k, depth + 1)])),
          { requiredKeys: required.filter((k) => k in props) },
        );
        const extra =
          typeof schema.additionalProperties === 'object' && depth <= 4
            ? fc.dictionary(fc.constantFrom('USD', 'EUR', 'agent-1', 'm_1'), schemaValue(doc, schema.additionalProperties as Schema, '', depth + 1), { maxKeys: 2 })
            : fc.constant({});
        arb = fc.tuple(record, extra).map(([r, e]) => ({ ...e, ...r }));
        break;
      }
      default:
        arb = fc.jsonValue({ maxDepth: 2 });
    }
  }
  return schema.nullable === true ? fc.option(arb, { nil: null, freq: 5 }) : arb;
}

/** One change to a generated value: drop, add or retype a field (at any depth), or replace the value. */
function mutate(value: unknown): fc.Arbitrary<unknown> {
  const replace = hostileValue;
  if (Array.isArray(value)) {
    return fc.oneof(
      replace,
      fc.tuple(fc.nat(), hostileValue).map(([i, v]) => (value.length ? value.map((x, j) => (j === i % value.length ? v : x)) : [v])),
      hostileValue.map((v) => [...value, v]),
    );
  }
  if (value !== null && typeof value === 'object') {
    const obj = value as Record<string, unknown>;
    const keys = Object.keys(obj);
    const newKey = fc.oneof(fc.constantFrom(...POLLUTION_KEYS), fc.string({ maxLength: 12 }), fc.constantFrom(...hostileStrings.filter((s) => s.length < 50)));
    const alts: fc.Arbitrary<unknown>[] = [replace, fc.tuple(newKey, hostileValue).map(([k, v]) => withKey(obj, k, v))];
    if (keys.length) {
      alts.push(fc.nat().map((i) => withoutKey(obj, keys[i % keys.length])));
      alts.push(fc.tuple(fc.nat(), hostileValue).map(([i, v]) => withKey(obj, keys[i % keys.length], v)));
      alts.push(
        fc
          .nat()
          .map((i) => keys[i % keys.length])
          .chain((k) => mutate(obj[k]).map((v) => withKey(obj, k, v))),
      );
    }
    return fc.oneof(...alts);
  }
  return replace;
}

const rawBodies = [
  '',
  ' ',
  'null',
  'not json',
  '{',
  '{"a":',
  '\ufeff{}',
  '[]',
  '"text"',
  '1e309',
  'true',
  '{"__proto__":{"admin":true}}',
  '{"constructor":{"prototype":{"admin":true}}}',
  '{"a":"\\ud800"}',
  '{"a":"\\u0000"}',
  '{"a":1e309}',
  '\u0000',
  'x'.repeat(2_000_000),
  '['.repeat(100_000) + ']'.repeat(100_000),
  '{"content":' + '['.repeat(20_000) + ']'.repeat(20_000) + '}',
];

const contentTypes = [
  'application/json',
  'application/json; charset=utf-8',
  'Application/JSON',
  'application/json; charset=utf-16',
  'application/vnd.api+json',
  'text/plain',
  'text/json',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/octet-stream',
  '',
  ';;;',
  'application/json\u00ff',
];

/** Header values as HTTP can carry them (latin-1, no CR/LF: Node's parser refuses those before any route). */
const headerString = (maxLength: number) =>
  fc.string({ unit: fc.integer({ min: 0x20, max: 0xff }).map((c) => String.fromCharCode(c)), maxLength });

const pathSegmentHostile = fc.oneof(
  fc.constantFrom(
    '..',
    '.',
    '../..',
    '..%2F..%2Fetc%2Fpasswd',
    '%2e%2e',
    '%00',
    'a%00b',
    '%',
    '%zz',
    '%ED%A0%80',
    '%C0%AE%C0%AE',
    '%FF',
    '%20',
    '+',
    ';x=1',
    '%0d%0aX-Injected:%201',
    '__proto__',
    'constructor',
    'prototype',
    'x'.repeat(200),
    'x'.repeat(5000),
  ),
  fc.string({ unit: 'grapheme', maxLength: 30 }).map((s) => encodeURIComponent(s)),
);

const encode = (v: unknown): string => {
  const s = typeof v === 'string' ? v : JSON.stringify(v) ?? '';
  try {
    return encodeURIComponent(s);
  } catch {
    return '%ED%A0%80'; // a lone surrogate, as UTF-8 bytes would carry it
  }
};

export function requestArbitrary(doc: OpenApiDocument, target: FuzzOperation, ctx: FuzzContext): fc.Arbitrary<FuzzRequest> {
  const params = target.op.parameters ?? [];
  const pathParams = params.filter((p) => p.in === 'path');
  const queryParams = params.filter((p) => p.in === 'query');
  const headerParams = params.filter((p) => p.in === 'header' && p.name.toLowerCase() !== 'idempotency-key');
  const bodySchema = target.op.requestBody?.content['application/json']?.schema;

  const pathValue = (p: Parameter): fc.Arbitrary<string> => {
    const pattern = typeof p.schema?.pattern === 'string' ? new RegExp(p.schema.pattern) : null;
    const known = ctx.knownIds.filter((id) => !pattern || pattern.test(id));
    return fc.oneof(
      { weight: 4, arbitrary: known.length ? fc.constantFrom(...known) : fc.constant('x') },
      { weight: 2, arbitrary: schemaValue(doc, p.schema, p.name).map(encode) },
      { weight: 3, arbitrary: pathSegmentHostile },
    );
  };
  const path = fc
    .tuple(...pathParams.map(pathValue))
    .map((values) => pathParams.reduce((url, p, i) => url.replace(`{${p.name}}`, values[i]), target.path));
  const pathMaybeMangled = fc.oneof(
    { weight: 12, arbitrary: path },
    { weight: 1, arbitrary: path.map((p) => `${p}/extra`) },
    { weight: 1, arbitrary: path.map((p) => p.toUpperCase()) },
    { weight: 1, arbitrary: path.map((p) => `${p}/..%2F..%2F`) },
    { weight: 1, arbitrary: path.map((p) => `//${p}`) },
  );

  const queryPart = (p: Parameter): fc.Arbitrary<string[]> =>
    fc.oneof(
      { weight: p.required ? 1 : 3, arbitrary: fc.constant<string[]>([]) },
      { weight: 4, arbitrary: schemaValue(doc, p.schema, p.name).map((v) => [`${p.name}=${encode(v)}`]) },
      { weight: 2, arbitrary: hostileString.filter((s) => s.length < 20_000).map((v) => [`${p.name}=${encode(v)}`]) },
      { weight: 1, arbitrary: fc.tuple(schemaValue(doc, p.schema, p.name), hostileString.filter((s) => s.length < 100)).map(([a, b]) => [`${p.name}=${encode(a)}`, `${p.name}=${encode(b)}`]) },
      { weight: 1, arbitrary: fc.constant<string[]>([`${p.name}[]=1`, `${p.name}[a]=2`]) },
    );
  const extraQuery = fc.oneof(
    { weight: 6, arbitrary: fc.constant([] as string[]) },
    { weight: 1, arbitrary: fc.constantFrom(['__proto__=1'], ['__proto__[polluted]=1'], ['constructor[prototype][polluted]=1'], ['a=%00'], ['%ED%A0%80=1'], ['&&&=']) },
  );
  const query = fc.tuple(fc.tuple(...queryParams.map(queryPart)), extraQuery).map(([parts, extra]) => [...parts.flat(), ...extra].join('&'));

  const auth = fc.oneof(
    { weight: 6, arbitrary: fc.constant(`Bearer ${ctx.key}`) },
    { weight: 3, arbitrary: fc.constant(undefined) },
    {
      weight: 3,
      arbitrary: fc.oneof(
        fc.constantFrom(
          'Bearer',
          'Bearer ',
          'Basic dXNlcjpwYXNz',
          'Bearer cdp_test_',
          `Bearer cdp_test_${'a'.repeat(64)}`,
          'Bearer cdp_live_0000',
          `bearer ${ctx.key}`,
          `Bearer  ${ctx.key}`,
          `Bearer ${ctx.key}x`,
          `Bearer ${ctx.key.toUpperCase()}`,
          `Bearer ${ctx.key.slice(0, -1)}`,
          `${ctx.key}`,
          `Bearer ${'x'.repeat(10_000)}`,
          'Bearer cdp_test_\u00e9\u00ff',
          'Bearer cdp_test_%00',
        ),
        headerString(80),
        headerString(60).map((s) => `Bearer cdp_test_${s}`),
      ),
    },
  );
  const idempotencyKey = fc.oneof(
    { weight: 3, arbitrary: fc.constant(undefined) },
    { weight: 4, arbitrary: fc.string({ unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)), minLength: 1, maxLength: 40 }) },
    { weight: 2, arbitrary: fc.constantFrom('fuzz-reused-1', 'fuzz-reused-2') },
    { weight: 2, arbitrary: fc.oneof(fc.constantFrom('', ' ', 'x'.repeat(256), 'é', 'a\tb', 'a b', '\u007f'), headerString(300)) },
  );
  const contentType = fc.oneof({ weight: 6, arbitrary: fc.constant('application/json') }, { weight: 1, arbitrary: fc.constant(undefined) }, { weight: 3, arbitrary: fc.constantFrom(...contentTypes) });
  const otherHeaders = fc.tuple(
    ...headerParams.map((p) =>
      fc.oneof(fc.constant(undefined), schemaValue(doc, p.schema, p.name).map(String), headerString(200), fc.constantFrom('did:key:z6Mk', 'did:web:../../etc', 'x'.repeat(5000))).map((v) => [p.name, v] as const),
    ),
  );

  const valid = schemaValue(doc, bodySchema);
  const body: fc.Arbitrary<string | undefined> = fc.oneof(
    { weight: target.op.requestBody ? 3 : 1, arbitrary: valid.map(toJsonText) },
    { weight: target.op.requestBody ? 5 : 1, arbitrary: valid.chain(mutate).map(toJsonText) },
    { weight: 1, arbitrary: hostileValue.map(toJsonText) },
    { weight: 1, arbitrary: fc.constantFrom(...rawBodies) },
    { weight: target.op.requestBody ? 1 : 4, arbitrary: fc.constant(undefined) },
  );
  const method = fc.oneof({ weight: 12, arbitrary: fc.constant(target.method) }, { weight: 1, arbitrary: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE') });

  return fc
    .record({ method, path: pathMaybeMangled, query, auth, idempotencyKey, contentType, otherHeaders, body })
    .map(({ method: m, path: p, query: q, auth: a, idempotencyKey: k, contentType: ct, otherHeaders: oh, body: b }) => {
      const headers: Record<string, string> = {};
      if (a !== undefined) headers.authorization = a;
      if (k !== undefined) headers['idempotency-key'] = k;
      for (const [name, v] of oh) if (v !== undefined) headers[name.toLowerCase()] = v;
      const withBody = b !== undefined && m !== 'GET';
      if (withBody && ct !== undefined) headers['content-type'] = ct;
      return { method: m, url: q ? `${p}?${q}` : p, headers, ...(withBody ? { payload: b } : {}) };
    });
}

/** A request, short enough for a failure message (huge strings abbreviated). */
export function describeRequest(r: FuzzRequest): string {
  const cut = (s: string) => (s.length > 300 ? `${JSON.stringify(s.slice(0, 200))}…(${s.length} chars)` : JSON.stringify(s));
  const headers = Object.entries(r.headers).map(([k, v]) => `${k}: ${cut(v)}`);
  return `${r.method} ${cut(r.url)} [${headers.join('; ')}]${r.payload === undefined ? '' : ` body=${cut(r.payload)}`}`;
}
