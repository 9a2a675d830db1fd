import type { RecordedEvent, SqlExecutor } from '@app/event-store';
import { WebhookEvents } from '../domain/event-types';
import type { WebhookBody } from '../domain/payload';

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

export type DeliveryState = 'pending' | 'delivered' | 'failed';

export interface DeliveryAttempted {
  delivery_id: string;
  endpoint_id: string;
  organization_id: string;
  webhook_id: string;
  /** 1-based over the delivery's life; `series` counts redeliveries (1 = the first). */
  attempt: number;
  series: number;
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

const STATE_AFTER: Record<DeliveryAttempted['outcome'], DeliveryState> = { delivered: 'delivered', retry: 'pending', failed: 'failed' };

/** Applies one delivery event to the read model, in the appending transaction. */
export async function applyDeliveryEvent(e: RecordedEvent, tx: SqlExecutor): Promise<void> {
  const at = e.recorded_at;
  switch (e.type) {
    case WebhookEvents.deliveryScheduled: {
      const d = e.data as DeliveryScheduled;
      await tx.query(
        `INSERT INTO webhook_deliveries (id, org_id, endpoint_id, event_id, event_type, transaction_id, body, status, series, series_attempts, attempts,
                                         next_attempt_at, revision, event_recorded_at, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, 'pending', 1, 0, 0, $8, $9, $10, $8, $8) ON CONFLICT (id) DO NOTHING`,
        [d.delivery_id, d.organization_id, d.endpoint_id, d.webhook_id, d.event_type, d.transaction_id, JSON.stringify(d.body), at, e.revision, d.event_recorded_at],
        { name: 'webhook_delivery_insert' },
      );
      return;
    }
    case WebhookEvents.deliveryAttempted: {
      const d = e.data as DeliveryAttempted;
      await tx.query(
        `INSERT INTO webhook_delivery_attempts (delivery_id, attempt, series, attempted_at, status_code, latency_ms, error, response_body, outcome, next_attempt_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT DO NOTHING`,
        [d.delivery_id, d.attempt, d.series, at, d.status_code, d.latency_ms, d.error, d.response_body, d.outcome, d.next_attempt_at],
        { name: 'webhook_attempt_insert' },
      );
      await tx.query(
        `UPDATE webhook_deliveries SET
           attempts = $2, last_attempt_at = $3, last_status_code = $4, last_error = $5, revision = $6, updated_at = $3, lease_until = NULL,
           status = CASE WHEN $7::boolean THEN $8 ELSE status END,
           series_attempts = CASE WHEN $7::boolean THEN series_attempts + 1 ELSE series_attempts END,
           next_attempt_at = CASE WHEN $7::boolean THEN $9::timestamptz ELSE next_attempt_at END,
           delivered_at = CASE WHEN $7::boolean AND $8 = 'delivered' THEN $3 ELSE delivered_at END
         WHERE id = $1`,
        [d.delivery_id, d.attempt, at, d.status_code, d.error, e.revision, d.current, STATE_AFTER[d.outcome], d.next_attempt_at],
        { name: 'webhook_delivery_attempted' },
      );
      // The endpoint's failure streak: a success ends it, a failure starts it if none is running.
      if (d.outcome === 'delivered') {
        await tx.query('UPDATE webhook_endpoints SET failing_since = NULL WHERE id = $1 AND failing_since IS NOT NULL', [d.endpoint_id], {
          name: 'webhook_endpoint_ok',
        });
      } else {
        await tx.query('UPDATE webhook_endpoints SET failing_since = $2 WHERE id = $1 AND failing_since IS NULL', [d.endpoint_id, at], {
          name: 'webhook_endpoint_failing',
        });
      }
      return;
    }
    case WebhookEvents.deliveryAbandoned: {
      const d = e.data as DeliveryAbandoned;
      await tx.query(
        `UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL, lease_until = NULL, last_error = $2, revision = $3, updated_at = $4 WHERE id = $1`,
        [d.delivery_id, d.reason, e.revision, at],
      );
      return;
    }
    case WebhookEvents.redeliveryRequested: {
      const d = e.data as RedeliveryRequested;
      await tx.query(
        `UPDATE webhook_deliveries SET status = 'pending', series = $2, series_attempts = 0, next_attempt_at = $4, lease_until = NULL, revision = $3, updated_at = $4
         WHERE id = $1`,
        [d.delivery_id, d.series, e.revision, at],
      );
      return;
    }
  }
}
