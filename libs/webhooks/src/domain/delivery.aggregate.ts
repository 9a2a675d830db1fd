import { DomainError } from '@app/core';
import { WebhookEvents } from './event-types';
import { uuidFromName } from './ids';
import type { DeliveryAbandoned, DeliveryAttempted, DeliveryScheduled, DeliveryStatus, RedeliveryRequested } from './delivery.events';
import type { AttemptResult, Decision } from './retry';

/**
 * The Delivery aggregate: one stream per delivery of one event to one endpoint
 * (`webhook-delivery-<id>`). `apply` folds its events; decisions return the events to append at
 * the state's revision (or nothing, when the delivery moved on), or throw a DomainError. The
 * state comes from the stream or from the deliveries read model (the projection keeps it with
 * every append).
 */
export interface DeliveryState {
  id: string;
  org_id: string;
  endpoint_id: string;
  /** The webhook-id (the source event's id). */
  event_id: string;
  event_type: string;
  transaction_id: string | null;
  /** The webhook body as sent (JSON text). */
  body: string;
  status: DeliveryStatus;
  series: number;
  series_attempts: number;
  attempts: number;
  next_attempt_at: string | null;
  /** Stream revision of the last event. */
  revision: number;
}

export interface DeliveryEvent {
  event_id?: string;
  type: string;
  data: unknown;
}

/** What an attempt's HTTP exchange gave (see HttpSender). */
export interface SentAttempt extends AttemptResult {
  latencyMs: number;
  responseBody: string | null;
}

const STATUS_AFTER: Record<DeliveryAttempted['outcome'], DeliveryStatus> = { delivered: 'delivered', retry: 'pending', failed: 'failed' };

export function applyDelivery(s: DeliveryState | null, e: DeliveryEvent, revision: number): DeliveryState {
  if (e.type === WebhookEvents.deliveryScheduled) {
    const d = e.data as DeliveryScheduled;
    return {
      id: d.delivery_id, org_id: d.organization_id, endpoint_id: d.endpoint_id, event_id: d.webhook_id, event_type: d.event_type, transaction_id: d.transaction_id,
      body: JSON.stringify(d.body), status: 'pending', series: 1, series_attempts: 0, attempts: 0, next_attempt_at: null, revision,
    };
  }
  if (!s) throw new Error(`${e.type} before webhook.delivery_scheduled`);
  switch (e.type) {
    case WebhookEvents.deliveryAttempted: {
      const d = e.data as DeliveryAttempted;
      if (!d.current) return { ...s, attempts: d.attempt, revision };
      return { ...s, attempts: d.attempt, status: STATUS_AFTER[d.outcome], series_attempts: d.series_attempt ?? s.series_attempts + 1, next_attempt_at: d.next_attempt_at, revision };
    }
    case WebhookEvents.deliveryAbandoned:
      return { ...s, status: 'failed', next_attempt_at: null, revision };
    case WebhookEvents.redeliveryRequested:
      return { ...s, status: 'pending', series: (e.data as RedeliveryRequested).series, series_attempts: 0, next_attempt_at: null, revision };
    default:
      return { ...s, revision };
  }
}

export const foldDelivery = (events: readonly DeliveryEvent[]): DeliveryState | null =>
  events.reduce<DeliveryState | null>((s, e, i) => applyDelivery(s, e, i), null);

/** The scheduled event's id comes from the delivery id, so scheduling twice (a replayed fan-out) stores it once. */
export const scheduleDelivery = (d: DeliveryScheduled): DeliveryEvent => ({
  event_id: uuidFromName('webhook.delivery_scheduled', d.delivery_id),
  type: WebhookEvents.deliveryScheduled,
  data: d,
});

/** Whether an attempt started on `loaded` still drives the delivery as it is `now`. */
export const stillCurrent = (loaded: DeliveryState, now: DeliveryState, series: number): boolean =>
  now.status === 'pending' && now.series === series && now.series_attempts === loaded.series_attempts;

/**
 * The attempt's record: started on the delivery as `loaded` (for series `series`), recorded on it
 * as it is `now` (the same, on the batched path). An attempt no longer current changes no state.
 */
export function recordAttempt(loaded: DeliveryState, now: DeliveryState, series: number, result: SentAttempt, decision: Decision): DeliveryEvent {
  const current = stillCurrent(loaded, now, series);
  const data: DeliveryAttempted = {
    delivery_id: now.id,
    endpoint_id: now.endpoint_id,
    organization_id: now.org_id,
    webhook_id: now.event_id,
    attempt: now.attempts + 1,
    series,
    series_attempt: now.series_attempts + 1,
    status_code: result.statusCode,
    latency_ms: result.latencyMs,
    error: result.error,
    response_body: result.responseBody,
    outcome: decision.outcome,
    next_attempt_at: decision.outcome === 'retry' ? decision.nextAttemptAt.toISOString() : null,
    current,
  };
  return { type: WebhookEvents.deliveryAttempted, data };
}

/** Its endpoint is gone or disabled: the series ends failed. Nothing once the delivery moved on. */
export function abandonDelivery(s: DeliveryState, series: number, reason: DeliveryAbandoned['reason']): DeliveryEvent[] {
  if (s.status !== 'pending' || s.series !== series) return [];
  const data: DeliveryAbandoned = { delivery_id: s.id, endpoint_id: s.endpoint_id, organization_id: s.org_id, series, reason };
  return [{ type: WebhookEvents.deliveryAbandoned, data }];
}

/** The caller's delivery; another organization's answers like a missing one. */
export function ownedDelivery(s: DeliveryState | null, orgId: string, id: string): DeliveryState {
  if (!s || s.org_id !== orgId) throw new DomainError('not_found', `webhook delivery ${id} not found`);
  return s;
}

/**
 * A new series of attempts with the same webhook-id and body, for a finished delivery (a
 * recovery takes only failed ones). The endpoint must be enabled (the handler checks it).
 */
export function requestRedelivery(s: DeliveryState, actor: string, opts: { onlyFailed: boolean }): DeliveryEvent[] {
  if (s.status === 'pending' || (opts.onlyFailed && s.status !== 'failed')) {
    throw new DomainError('webhook_delivery_pending', `Delivery ${s.id} is still being attempted; redeliver it once it has finished`);
  }
  const data: RedeliveryRequested = { delivery_id: s.id, endpoint_id: s.endpoint_id, organization_id: s.org_id, series: s.series + 1, requested_by: actor };
  return [{ type: WebhookEvents.redeliveryRequested, data }];
}
