import { eventFact, InlineProjection, RowChange } from '@app/event-store';
import type { DeliveryAbandoned, DeliveryAttempted, DeliveryScheduled, RedeliveryRequested } from '../domain/delivery.events';
import type { EndpointUpdated } from '../domain/endpoint.events';
import { WebhookEvents } from '../domain/event-types';

const STATUS_AFTER: Record<DeliveryAttempted['outcome'], string> = { delivered: 'delivered', retry: 'pending', failed: 'failed' };

/**
 * The deliveries read model, their attempt history, and each endpoint's failure streak, one
 * projection of the delivery streams written with each append (single, batched, rebuilt).
 *
 * The streak (`webhook_endpoint_failing`: since when every attempt to the endpoint has failed)
 * is a row that a failed attempt inserts unless one exists, and a success (or re-enabling the
 * endpoint, an endpoint event this projection reads for that alone) deletes. Several successes
 * to one endpoint in one batch each delete it: the store lets several appends delete one row.
 */
export const deliveriesProjection: InlineProjection = {
  name: 'webhook_deliveries',
  filter: {
    eventTypes: [WebhookEvents.deliveryScheduled, WebhookEvents.deliveryAttempted, WebhookEvents.deliveryAbandoned, WebhookEvents.redeliveryRequested, WebhookEvents.endpointUpdated],
    streamPrefix: 'webhook-',
  },
  tables: ['webhook_deliveries', 'webhook_delivery_attempts', 'webhook_endpoint_failing'],
  apply(e): RowChange[] {
    const at = e.recorded_at;
    const touched = { revision: eventFact('revision'), updated_at: at };
    switch (e.type) {
      case WebhookEvents.deliveryScheduled: {
        const d = e.data as DeliveryScheduled;
        const row = {
          id: d.delivery_id, org_id: d.organization_id, endpoint_id: d.endpoint_id, event_id: d.webhook_id, event_type: d.event_type, transaction_id: d.transaction_id,
          body: JSON.stringify(d.body), status: 'pending', series: 1, series_attempts: 0, attempts: 0, next_attempt_at: at, event_recorded_at: d.event_recorded_at, created_at: at, ...touched,
        };
        return [{ op: 'insert', table: 'webhook_deliveries', key: ['id'], row }];
      }
      case WebhookEvents.deliveryAttempted: {
        const d = e.data as DeliveryAttempted;
        const attempt = {
          delivery_id: d.delivery_id, attempt: d.attempt, series: d.series, attempted_at: at, status_code: d.status_code, latency_ms: d.latency_ms, error: d.error,
          response_body: d.response_body, outcome: d.outcome, next_attempt_at: d.next_attempt_at,
        };
        const state = d.current
          ? {
              status: STATUS_AFTER[d.outcome],
              // Events recorded before series_attempt existed: their attempt number (exact for a
              // first series; a plain value, so a rebuild folds it like any other).
              series_attempts: d.series_attempt ?? d.attempt,
              next_attempt_at: d.next_attempt_at,
              ...(d.outcome === 'delivered' ? { delivered_at: at } : {}),
            }
          : {};
        const streak: RowChange =
          d.outcome === 'delivered'
            ? { op: 'delete', table: 'webhook_endpoint_failing', key: { endpoint_id: d.endpoint_id } }
            : { op: 'insert', table: 'webhook_endpoint_failing', key: ['endpoint_id'], row: { endpoint_id: d.endpoint_id, since: at } };
        return [
          { op: 'insert', table: 'webhook_delivery_attempts', key: ['delivery_id', 'attempt'], row: attempt },
          {
            op: 'update',
            table: 'webhook_deliveries',
            key: { id: d.delivery_id },
            set: { attempts: d.attempt, last_attempt_at: at, last_status_code: d.status_code, last_error: d.error, ...state, ...touched },
          },
          streak,
        ];
      }
      case WebhookEvents.deliveryAbandoned: {
        const d = e.data as DeliveryAbandoned;
        return [{ op: 'update', table: 'webhook_deliveries', key: { id: d.delivery_id }, set: { status: 'failed', next_attempt_at: null, last_error: d.reason, ...touched } }];
      }
      case WebhookEvents.redeliveryRequested: {
        const d = e.data as RedeliveryRequested;
        return [{ op: 'update', table: 'webhook_deliveries', key: { id: d.delivery_id }, set: { status: 'pending', series: d.series, series_attempts: 0, next_attempt_at: at, ...touched } }];
      }
      case WebhookEvents.endpointUpdated: {
        // Re-enabling an endpoint starts its streak afresh.
        const d = e.data as EndpointUpdated;
        return d.enabled === true ? [{ op: 'delete', table: 'webhook_endpoint_failing', key: { endpoint_id: d.endpoint_id } }] : [];
      }
      default:
        return [];
    }
  },
};
