import type { Projection, RecordedEvent, SqlExecutor } from '@app/event-store';
import { TRANSACTION_STREAM_PREFIX, WEBHOOK_EVENT_TYPES } from '../domain/event-types';
import { deliveryIdFor } from '../domain/ids';
import { CommerceEventData, webhookBody } from '../domain/payload';
import { DeliveryRepository, DueDelivery } from './delivery.repository';

export const FAN_OUT_PROJECTION = 'webhook-fan-out';

/**
 * The outbox side of webhooks: each commerce lifecycle event becomes one delivery per enabled
 * endpoint of its organization that subscribes to its type (and existed when it was recorded).
 * Deliveries are scheduled in the projection's batch transaction, so they commit with its
 * checkpoint, exactly once; only then are they handed to the queue (`afterCommit`). A crash in
 * between leaves them pending in the store, and the next start re-enqueues them.
 */
export function fanOutProjection(deliveries: DeliveryRepository, enqueue: (due: DueDelivery[]) => Promise<void>): Projection {
  return {
    name: FAN_OUT_PROJECTION,
    filter: { eventTypes: [...WEBHOOK_EVENT_TYPES], streamPrefix: TRANSACTION_STREAM_PREFIX },
    async apply(event: RecordedEvent, tx: SqlExecutor): Promise<void> {
      const data = event.data as Partial<CommerceEventData>;
      if (typeof data?.organization_id !== 'string') return;
      const endpoints = await tx.query<{ id: string }>(
        `SELECT id FROM webhook_endpoints
         WHERE org_id = $1 AND enabled AND deleted_at IS NULL AND $2 = ANY(event_types) AND created_at <= $3
         ORDER BY id`,
        [data.organization_id, event.type, event.recorded_at],
        { name: 'webhook_fan_out_endpoints' },
      );
      if (endpoints.length === 0) return;
      const body = webhookBody(event);
      for (const ep of endpoints) {
        await deliveries.scheduleIn(tx, {
          delivery_id: deliveryIdFor(event.event_id, ep.id),
          endpoint_id: ep.id,
          organization_id: data.organization_id,
          webhook_id: event.event_id,
          event_type: event.type,
          transaction_id: body.transaction_id,
          event_recorded_at: event.recorded_at,
          body,
        });
      }
    },
    async afterCommit(events: RecordedEvent[]): Promise<void> {
      await enqueue(await deliveries.pendingForEvents(events.map((e) => e.event_id)));
    },
  };
}
