/**
 * Checks real traffic against the service's OpenAPI document: wrap a client's fetch, and every
 * request body and every answer is validated against the schema its operation declares. So the
 * types generated from the document (the SDK's) are what the service really accepts and sends.
 * A small validator for the JSON Schema the document uses (OpenAPI 3.0 flavour).
 */

type Schema = Record<string, unknown>;
interface Operation {
  operationId: string;
  requestBody?: { content: Record<string, { schema: Schema }> };
  responses: Record<string, { content?: Record<string, { schema: Schema }> }>;
}
export interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
}

const typeOf = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : Number.isInteger(v) ? 'integer' : typeof v);

export function validate(doc: OpenApiDocument, schema: Schema, value: unknown, at = '$'): string[] {
  if (typeof schema.$ref === 'string') return validate(doc, doc.components.schemas[schema.$ref.replace('#/components/schemas/', '')], value, at);
  if (value === null) return schema.nullable === true || (Array.isArray(schema.enum) && schema.enum.includes(null)) || Object.keys(schema).length === 0 ? [] : [`${at}: null is not allowed`];
  const problems: string[] = [];
  for (const key of ['anyOf', 'oneOf'] as const) {
    const options = schema[key] as Schema[] | undefined;
    if (options && !options.some((s) => validate(doc, s, value, at).length === 0)) problems.push(`${at}: matches none of ${key}`);
  }
  for (const s of (schema.allOf as Schema[] | undefined) ?? []) problems.push(...validate(doc, s, value, at));
  const type = schema.type as string | undefined;
  const actual = typeOf(value);
  if (type && !(type === actual || (type === 'number' && actual === 'integer'))) return [...problems, `${at}: expected ${type}, got ${actual}`];
  if (Array.isArray(schema.enum) && !schema.enum.includes(value)) problems.push(`${at}: ${JSON.stringify(value)} is not one of ${JSON.stringify(schema.enum)}`);
  if (actual === 'array' && schema.items) (value as unknown[]).forEach((v, i) => problems.push(...validate(doc, schema.items as Schema, v, `${at}[${i}]`)));
  if (actual === 'object') {
    const obj = value as Record<string, unknown>;
    const props = (schema.properties as Record<string, Schema> | undefined) ?? {};
    for (const name of (schema.required as string[] | undefined) ?? []) if (!(name in obj)) problems.push(`${at}.${name}: missing`);
    for (const [name, v] of Object.entries(obj)) {
      if (props[name]) problems.push(...validate(doc, props[name], v, `${at}.${name}`));
      else if (schema.additionalProperties === false) problems.push(`${at}.${name}: not in the schema`);
      else if (typeof schema.additionalProperties === 'object') problems.push(...validate(doc, schema.additionalProperties as Schema, v, `${at}.${name}`));
    }
  }
  return problems;
}

/** Records every call made through `fetch` and what did not conform. */
export class ConformanceRecorder {
  readonly problems: string[] = [];
  /** operationIds answered with a 2xx. */
  readonly succeeded = new Set<string>();
  private readonly routes: Array<{ re: RegExp; method: string; op: Operation }> = [];

  constructor(private readonly doc: OpenApiDocument) {
    for (const [path, item] of Object.entries(doc.paths)) {
      const segments = path.split('/').map((seg) => (/^\{[^}]+\}$/.test(seg) ? '[^/]+' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
      const re = new RegExp(`^${segments.join('/')}$`);
      for (const [method, op] of Object.entries(item)) this.routes.push({ re, method: method.toUpperCase(), op });
    }
  }

  operation(method: string, pathname: string): Operation | undefined {
    return this.routes.find((r) => r.method === method && r.re.test(pathname))?.op;
  }

  /** A fetch that checks each exchange against the document, then answers as the real one. */
  readonly fetch: typeof fetch = async (input, init) => {
    const url = new URL(String(input));
    const method = (init?.method ?? 'GET').toUpperCase();
    const res = await fetch(input, init);
    const op = this.operation(method, url.pathname);
    const where = `${method} ${url.pathname}`;
    if (!op) {
      this.problems.push(`${where}: not in the document`);
      return res;
    }
    const text = await res.clone().text();
    const type = (res.headers.get('content-type') ?? '').split(';')[0].trim();
    const declared = op.responses[String(res.status)] ?? op.responses.default;
    if (!declared) {
      this.problems.push(`${where} (${op.operationId}): status ${res.status} is not declared`);
      return res;
    }
    if (res.ok) {
      this.succeeded.add(op.operationId);
      if (init?.body !== undefined && op.requestBody) {
        const schema = op.requestBody.content['application/json']?.schema;
        if (schema) this.problems.push(...validate(this.doc, schema, JSON.parse(String(init.body)), `${op.operationId} request`));
      }
    }
    if (!declared.content) {
      if (text.length > 0) this.problems.push(`${where} (${op.operationId}): ${res.status} declares no body but got one`);
      return res;
    }
    const media = declared.content[type];
    if (!media) this.problems.push(`${where} (${op.operationId}): ${res.status} answered ${type}, declared ${Object.keys(declared.content).join(', ')}`);
    else this.problems.push(...validate(this.doc, media.schema, JSON.parse(text), `${op.operationId} ${res.status}`));
    return res;
  };
}
