import { z } from 'zod';
import { apiOutput } from '@app/http';
import { LANES } from '../domain/lanes';
import { SCOPES } from '../domain/scopes';

/** Response shapes of the access routes, named in the OpenAPI document (and so in the SDK). */

const scope = z.enum(SCOPES);
const mode = z.enum(['test', 'live']);
const lane = z.enum(LANES as ['anonymous', 'agent', 'authenticated']);

export const quotaBucketSchema = apiOutput(
  'QuotaBucket',
  z.object({ limit: z.number().int(), remaining: z.number().int(), reset_seconds: z.number().int(), window_seconds: z.number().int() }),
);

export const quotaStateSchema = apiOutput(
  'QuotaState',
  z
    .object({
      schema_version: z.literal('service.quota.v1'),
      lane,
      identity_key: z.string(),
      buckets: z.object({
        demo_window: quotaBucketSchema,
        public_verify_window: quotaBucketSchema,
        certificate_fetch_window: quotaBucketSchema,
        registry_list_window: quotaBucketSchema,
        badge_window: quotaBucketSchema,
        sandbox_key_daily: quotaBucketSchema,
        sandbox_key_global_window: quotaBucketSchema,
      }),
      lanes_available: z.array(lane),
      did_status: z.string().optional().describe('agent lane: did_accepted, did_rejected:<reason> or did_downgraded:per_ip_rotation_cap'),
      agent_did_rotation: z
        .object({ unique_dids_in_window: z.number().int(), max: z.number().int(), reset_at: z.string(), window_seconds: z.number().int() })
        .optional(),
      degraded: z.boolean().optional().describe('true when the counter store (Redis) could not be read'),
    })
    .describe('service.quota.v1: the caller’s lane and buckets'),
);

export const sandboxKeySchema = apiOutput(
  'SandboxKey',
  z.object({
    key_id: z.string(),
    key: z.string().describe('cdp_test_…: shown this once'),
    org_id: z.string(),
    scopes: z.array(scope),
    mode: z.literal('test'),
    expires_at: z.string().nullable(),
    sandbox: z.literal(true),
  }),
);

export const callerSchema = apiOutput('Caller', z.object({ org_id: z.string(), key_id: z.string(), scopes: z.array(scope), mode, lane }));

export const apiKeyViewSchema = apiOutput(
  'ApiKey',
  z.object({
    key_id: z.string(),
    org_id: z.string(),
    mode,
    scopes: z.array(scope),
    name: z.string().nullable(),
    owner: z.string().nullable().describe('who holds the key (keys:create --owner); a policy may require that a reviewer is not the requester nor another key of the same owner'),
    created_by: z.string().nullable().describe('who created the key: the creating key\'s id, `user:<id>` (the console) or `operator` (the admin CLI); null for keys created before it was recorded, the demo and sandbox keys. The review rules treat a key and its creator chain as one reviewer'),
    created_at: z.string(),
    expires_at: z.string().nullable(),
    revoked_at: z.string().nullable(),
    status: z.enum(['active', 'revoked', 'expired']),
  }),
);

export const createdApiKeySchema = apiOutput(
  'CreatedApiKey',
  z.object({
    key_id: z.string(),
    key: z.string().describe('cdp_test_… or cdp_live_…: shown this once (only its SHA-256 is stored)'),
    org_id: z.string(),
    scopes: z.array(scope),
    mode,
    expires_at: z.string().nullable(),
    name: z.string().nullable(),
    owner: z.string().nullable(),
  }),
);

export const apiKeyListSchema = apiOutput('ApiKeyList', z.object({ keys: z.array(apiKeyViewSchema) }));
