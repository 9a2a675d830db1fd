import type { WebhookBody } from './payload';

/** Events of `webhook-delivery-<id>` streams: one delivery of one event to one endpoint. */
export interface DeliveryScheduled {
  delivery_id: string;
  endpoint_id: string;
  organization_id: string;
  /** The `webhook-id`: the source event's id, the same for every attempt and redelivery. */
  webhook_id: string;
  event_type: string;
  transaction_id: string | null;
  event_recorded_at: string;
  body: WebhookBody;
}

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

export interface DeliveryAttempted {
  delivery_id: string;
  endpoint_id: string;
  organization_id: string;
  webhook_id: string;
  /** 1-based over the delivery's life; `series` counts redeliveries (1 = the first). */
  attempt: number;
  series: number;
  /** 1-based within its series (absent in events recorded before it was added). */
  series_attempt?: number;
  status_code: number | null;
  latency_ms: number;
  error: string | null;
  /** At most 20 KB of what the receiver answered. */
  response_body: string | null;
  outcome: 'delivered' | 'retry' | 'failed';
  next_attempt_at: string | null;
  /**
   * False when the attempt no longer drove the delivery (a redelivery began meanwhile, or a
   * duplicate attempt after a queue loss): it is recorded, and changes no state.
   */
  current: boolean;
}

export interface DeliveryAbandoned {
  delivery_id: string;
  endpoint_id: string;
  organization_id: string;
  series: number;
  reason: 'endpoint_disabled' | 'endpoint_deleted';
}

export interface RedeliveryRequested {
  delivery_id: string;
  endpoint_id: string;
  organization_id: string;
  series: number;
  requested_by: string;
}
