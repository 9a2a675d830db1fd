import { z } from 'zod';
import type { AccessContext } from '@app/access';
import { isStorableTime } from '@app/core';
import { apiInput } from '@app/http';
import { WEBHOOK_EVENT_TYPES, WEBHOOK_TEST_EVENT_TYPE } from '../domain/event-types';
import { DELIVERY_ID_RE, ENDPOINT_ID_RE } from '../domain/ids';
import { MAX_URL_LENGTH } from '../domain/target';
import './webhooks.openapi';

/** What the webhook routes parse: bodies, path and query parameters (one definition each, for the OpenAPI document too). */
const eventTypes = z
  .array(z.enum(WEBHOOK_EVENT_TYPES, { error: `must be one of ${WEBHOOK_EVENT_TYPES.join(', ')}` }))
  .min(1, 'subscribe to at least one event type (omit the field for all)')
  .max(50);
const url = z.string({ error: 'url must be a string' }).min(1).max(MAX_URL_LENGTH);
const description = z.string().trim().max(500).nullable();
export const createBody = apiInput(
  'CreateWebhookEndpointRequest',
  z.object({ url, event_types: eventTypes.optional(), description: description.optional(), enabled: z.boolean().optional() }).strict(),
);
export const updateBody = apiInput(
  'UpdateWebhookEndpointRequest',
  z
    .object({ url: url.optional(), event_types: eventTypes.optional(), description: description.optional(), enabled: z.boolean().optional() })
    .strict()
    .refine((b) => Object.keys(b).length > 0, { message: 'nothing to change' }),
);
export const endpointParams = z.object({ id: z.string().regex(ENDPOINT_ID_RE, 'must be a webhook endpoint id (ep_ and 32 hex digits)') });
export const deliveryParams = z.object({ id: z.string().regex(DELIVERY_ID_RE, 'must be a webhook delivery id (dlv_ and 32 hex digits)') });
// A time PostgreSQL can compare with: year 0 or 10000 once in UTC (`0001-01-01T00:30:00+01:00`) is not one.
export const recoverQuery = z
  .object({
    since: z.iso
      .datetime({ offset: true, error: 'since must be an ISO-8601 date-time' })
      .refine((s) => isStorableTime(Date.parse(s)), 'since must be between the years 1 and 9999 (in UTC)'),
  })
  .strict();
export const listQuery = z
  .object({
    endpoint_id: z.string().regex(ENDPOINT_ID_RE, 'must be a webhook endpoint id').optional(),
    status: z.enum(['pending', 'delivered', 'failed']).optional(),
    event_type: z.enum([...WEBHOOK_EVENT_TYPES, WEBHOOK_TEST_EVENT_TYPE]).optional(),
    limit: z.coerce.number().int().min(1).max(200).default(50),
    cursor: z.string().max(300).optional(),
  })
  .strict();

export type EndpointParams = z.infer<typeof endpointParams>;
export type DeliveryParams = z.infer<typeof deliveryParams>;

export const actorOf = (c: AccessContext) => `api_key:${c.principal!.keyId}`;
