import { applyDecorators } from '@nestjs/common';
import { ApiBody, ApiParam, ApiQuery, ApiResponse } from '@nestjs/swagger';
import type { OpenAPIObject } from '@nestjs/swagger';
import { z } from 'zod';

/**
 * OpenAPI schemas from zod. Request and response shapes are zod schemas registered under a name;
 * the document gets them as `components.schemas` (zod 4's own JSON Schema output), and routes
 * point at them by `$ref`. The SDK's types are generated from that document, so a schema here is
 * what an integrator compiles against: keep it exactly what the route accepts and answers.
 */

type Meta = { id: string };
/** Request bodies: read as zod's input (defaults optional, non-strict objects open). */
const inputs = z.registry<Meta>();
/** Responses: read as zod's output (every field listed, nothing else). */
const outputs = z.registry<Meta>();

/** Names a request schema in the document; returns it unchanged. */
export function apiInput<T extends z.ZodType>(id: string, schema: T): T {
  inputs.add(schema, { id });
  return schema;
}

/** Names a response schema in the document; returns it unchanged. */
export function apiOutput<T extends z.ZodType>(id: string, schema: T): T {
  outputs.add(schema, { id });
  return schema;
}

export const schemaRef = (id: string) => ({ $ref: `#/components/schemas/${id}` });

const uri = (id: string) => `#/components/schemas/${id}`;

type JsonSchema = Record<string, unknown>;

/** zod's openapi-3.0 output, minus what only adds noise to the document (`$id`, the safe-integer bounds of `.int()`). */
function tidy(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(tidy);
  if (value === null || typeof value !== 'object') return value;
  const out: JsonSchema = {};
  for (const [k, v] of Object.entries(value)) {
    if (k === '$id') continue;
    if (k === 'minimum' && v === Number.MIN_SAFE_INTEGER) continue;
    if (k === 'maximum' && v === Number.MAX_SAFE_INTEGER) continue;
    out[k] = tidy(v);
  }
  return out;
}

const registryJson = (registry: typeof inputs, io: 'input' | 'output') =>
  tidy(z.toJSONSchema(registry, { target: 'openapi-3.0', io, uri, unrepresentable: 'any' })) as { schemas: Record<string, JsonSchema> };
const schemaJson = (schema: z.ZodType) => tidy(z.toJSONSchema(schema, { target: 'openapi-3.0', io: 'input', unrepresentable: 'any' })) as JsonSchema;

/** Every named schema, as `components.schemas`. A name used for two different shapes is refused. */
export function openApiSchemas(): Record<string, JsonSchema> {
  const merged: Record<string, JsonSchema> = {};
  for (const [registry, io] of [
    [inputs, 'input'],
    [outputs, 'output'],
  ] as const) {
    const { schemas } = registryJson(registry, io);
    for (const [id, schema] of Object.entries(schemas)) {
      if (id in merged && JSON.stringify(merged[id]) !== JSON.stringify(schema)) throw new Error(`OpenAPI schema ${id} is registered with two different shapes`);
      merged[id] = schema;
    }
  }
  return Object.fromEntries(Object.entries(merged).sort(([a], [b]) => a.localeCompare(b)));
}

/** The error envelope every failure answers with. */
export const ERROR_ENVELOPE_SCHEMA: JsonSchema = {
  type: 'object',
  description:
    'Every error: a stable snake_case code (docs/errors.md), a sentence, and whether the same request may succeed later (`retryable`); `details` for validation failures and some refusals.',
  properties: {
    ok: { type: 'boolean', enum: [false] },
    error: { type: 'string' },
    message: { type: 'string' },
    retryable: { type: 'boolean', description: 'true: the same request may succeed later (429, 503, a transient 409, 502 settlement_failed); false: never retry it unchanged' },
    details: {},
  },
  required: ['ok', 'error', 'message', 'retryable'],
};

/**
 * Completes the document Nest built: adds the named schemas and the error envelope, and declares
 * the envelope as every operation's `default` response.
 */
export function completeOpenApiDocument(document: OpenAPIObject): OpenAPIObject {
  document.components = { ...document.components, schemas: { ...document.components?.schemas, ...openApiSchemas(), ErrorEnvelope: ERROR_ENVELOPE_SCHEMA } };
  for (const item of Object.values(document.paths)) {
    for (const method of ['get', 'put', 'post', 'delete', 'patch'] as const) {
      const op = item[method];
      if (op && !op.responses.default) op.responses.default = { description: 'An error', content: { 'application/json': { schema: schemaRef('ErrorEnvelope') } } };
    }
  }
  return document;
}

/** The JSON body of a route, by schema name. */
export const ApiJsonBody = (id: string, description?: string) => ApiBody({ required: true, schema: schemaRef(id), description });

/** A success response, by schema name (JSON unless another media type is given). */
export const ApiJsonResponse = (status: number, id: string, description = 'Success') => ApiResponse({ status, description, schema: schemaRef(id) });

function fieldsOf(schema: z.ZodObject): Array<{ name: string; required: boolean; schema: JsonSchema; description?: string }> {
  const json = schemaJson(schema) as { properties?: Record<string, JsonSchema>; required?: string[] };
  return Object.entries(json.properties ?? {}).map(([name, s]) => {
    const { description, ...rest } = s;
    return { name, required: (json.required ?? []).includes(name), schema: rest, description: typeof description === 'string' ? description : undefined };
  });
}

/** Declares a route's path parameters from the zod object its ZodPipe validates. */
export const ApiPathParams = (schema: z.ZodObject) =>
  applyDecorators(...fieldsOf(schema).map((f) => ApiParam({ name: f.name, required: true, schema: f.schema, description: f.description })));

/** Declares a route's query parameters from the zod object its ZodPipe validates. */
export const ApiQueryParams = (schema: z.ZodObject) =>
  applyDecorators(...fieldsOf(schema).map((f) => ApiQuery({ name: f.name, required: f.required, schema: f.schema, description: f.description })));
