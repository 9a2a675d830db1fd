import { LIFECYCLE_EVENT_TYPES, LifecycleEventType } from '@app/commerce';

/** The commerce lifecycle events an endpoint can subscribe to: the spec's nine, as commerce records them. */
export const WEBHOOK_EVENT_TYPES = LIFECYCLE_EVENT_TYPES;

export type WebhookEventType = LifecycleEventType;

/** The event_type of the ping `POST /api/cdp/webhooks/endpoints/{id}/test` sends. */
export const WEBHOOK_TEST_EVENT_TYPE = 'webhook.test';

/** Commerce events live in one stream per transaction. */
export const TRANSACTION_STREAM_PREFIX = 'transaction-';

/** Events of this lib, on streams `webhook-endpoint-<id>` and `webhook-delivery-<id>`. */
export const WebhookEvents = {
  endpointCreated: 'webhook.endpoint_created',
  endpointUpdated: 'webhook.endpoint_updated',
  endpointSecretRotated: 'webhook.endpoint_secret_rotated',
  endpointDisabled: 'webhook.endpoint_disabled',
  endpointDeleted: 'webhook.endpoint_deleted',
  deliveryScheduled: 'webhook.delivery_scheduled',
  deliveryAttempted: 'webhook.delivery_attempted',
  deliveryAbandoned: 'webhook.delivery_abandoned',
  redeliveryRequested: 'webhook.delivery_redelivery_requested',
} as const;

export const endpointStream = (id: string) => `webhook-endpoint-${id}`;
export const deliveryStream = (id: string) => `webhook-delivery-${id}`;
