import { z } from 'zod';
import { apiOutput } from '@app/http';
import { WEBHOOK_EVENT_TYPES, WEBHOOK_TEST_EVENT_TYPE } from '../domain/event-types';

/** Response shapes of the webhook routes, named in the OpenAPI document (and so in the SDK). */

const eventType = z.enum(WEBHOOK_EVENT_TYPES);

const endpointFields = {
  id: z.string(),
  url: z.string(),
  event_types: z.array(eventType),
  description: z.string().nullable(),
  enabled: z.boolean(),
  disabled_reason: z.enum(['manual', 'gone', 'failing']).nullable(),
  disabled_at: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
};

export const webhookEndpointSchema = apiOutput('WebhookEndpoint', z.object(endpointFields));
export const webhookEndpointCreatedSchema = apiOutput(
  'WebhookEndpointCreated',
  z.object({ ...endpointFields, secret: z.string().describe('whsec_…: shown this once') }),
);
export const webhookEndpointListSchema = apiOutput('WebhookEndpointList', z.object({ items: z.array(webhookEndpointSchema) }));
export const webhookSecretRotationSchema = apiOutput(
  'WebhookSecretRotation',
  z.object({ id: z.string(), secret: z.string().describe('whsec_…: shown this once'), previous_secret_expires_at: z.string() }),
);
export const webhookTestSchema = apiOutput('WebhookTestDelivery', z.object({ delivery_id: z.string(), webhook_id: z.string(), status: z.literal('pending') }));
export const webhookRecoverySchema = apiOutput('WebhookRecovery', z.object({ endpoint_id: z.string(), since: z.string(), recovered: z.number().int() }));

const deliveryFields = {
  id: z.string(),
  endpoint_id: z.string(),
  webhook_id: z.string().describe('the event id: the webhook-id header, the same on every retry'),
  event_type: z.enum([...WEBHOOK_EVENT_TYPES, WEBHOOK_TEST_EVENT_TYPE]),
  transaction_id: z.string().nullable(),
  status: z.enum(['pending', 'delivered', 'failed']),
  attempts: z.number().int(),
  series: z.number().int(),
  last_status_code: z.number().int().nullable(),
  last_error: z.string().nullable(),
  next_attempt_at: z.string().nullable(),
  last_attempt_at: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
  delivered_at: z.string().nullable(),
};

export const webhookDeliverySchema = apiOutput('WebhookDelivery', z.object(deliveryFields));
export const webhookDeliveryPageSchema = apiOutput('WebhookDeliveryPage', z.object({ items: z.array(webhookDeliverySchema), next_cursor: z.string().nullable() }));

export const webhookBodySchema = apiOutput(
  'WebhookBody',
  z
    .object({
      id: z.string(),
      event_type: z.string(),
      transaction_id: z.string().nullable(),
      timestamp: z.string(),
      actor: z.object({ type: z.string(), id: z.string().nullable() }),
      status: z.string().nullable(),
      sequence: z.number().int().nullable(),
      metadata: z.record(z.string(), z.unknown()),
    })
    .describe('What a receiver gets: one lifecycle event'),
);

export const webhookDeliveryDetailSchema = apiOutput(
  'WebhookDeliveryDetail',
  z.object({
    ...deliveryFields,
    payload: webhookBodySchema,
    attempt_history: z.array(
      z.object({
        attempt: z.number().int(),
        series: z.number().int(),
        attempted_at: z.string().nullable(),
        status_code: z.number().int().nullable(),
        latency_ms: z.number().int(),
        error: z.string().nullable(),
        response_body: z.string().nullable().describe('the first 20 KB'),
        outcome: z.string(),
        next_attempt_at: z.string().nullable(),
      }),
    ),
  }),
);

export const webhookRedeliverySchema = apiOutput(
  'WebhookRedelivery',
  z.object({ id: z.string(), webhook_id: z.string(), status: z.literal('pending'), series: z.number().int() }),
);
