import type { RecordedEvent } from '@app/event-store';
import { WEBHOOK_EVENT_TYPES, WebhookEventType } from './event-types';

/** The body of a webhook: one lifecycle event, as the commerce contract fixes it. */
export interface WebhookBody {
  /** The event id; also the `webhook-id` header, stable across retries and redeliveries. */
  id: string;
  event_type: string;
  transaction_id: string | null;
  /** When the event was recorded, ISO-8601. */
  timestamp: string;
  actor: { type: string; id: string | null };
  status: string | null;
  /** Position of the event in its transaction (1-based), so consumers can order events. */
  sequence: number | null;
  metadata: Record<string, unknown>;
}

export interface CommerceEventData {
  transaction_id: string;
  organization_id: string;
  status: string;
  [field: string]: unknown;
}

export const isWebhookEventType = (t: string): t is WebhookEventType => (WEBHOOK_EVENT_TYPES as readonly string[]).includes(t);

/** `api_key:key_…` → {type: 'api_key', id: 'key_…'}; `system:expiry-sweep` → {type: 'system', …}. */
export function parseActor(actor: unknown): WebhookBody['actor'] {
  if (typeof actor !== 'string' || actor === '') return { type: 'unknown', id: null };
  const i = actor.indexOf(':');
  return i < 0 ? { type: 'unknown', id: actor } : { type: actor.slice(0, i), id: actor.slice(i + 1) };
}

export function webhookBody(event: RecordedEvent): WebhookBody {
  const { transaction_id, organization_id: _org, status, ...metadata } = event.data as CommerceEventData;
  return {
    id: event.event_id,
    event_type: event.type,
    transaction_id: typeof transaction_id === 'string' ? transaction_id : null,
    timestamp: event.recorded_at,
    actor: parseActor(event.metadata?.actor),
    status: typeof status === 'string' ? status : null,
    sequence: event.revision + 1,
    metadata,
  };
}

/** The ping body of the endpoint test. */
export const testPingBody = (webhookId: string, endpointId: string, at: Date, actor: string): WebhookBody => ({
  id: webhookId,
  event_type: 'webhook.test',
  transaction_id: null,
  timestamp: at.toISOString(),
  actor: parseActor(actor),
  status: null,
  sequence: null,
  metadata: { endpoint_id: endpointId, message: 'This is a test event from Sigil.' },
});
