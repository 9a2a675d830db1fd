import type { Projection, RecordedEvent, SqlExecutor } from '@app/event-store';
import { TRANSACTION_STREAM_PREFIX, WEBHOOK_EVENT_TYPES } from '../domain/event-types';
import { deliveryIdFor } from '../domain/ids';
import { CommerceEventData, webhookBody } from '../domain/payload';
import type { DeliveryScheduled } from './delivery.events';
import { DeliveryRepository, DueDelivery } from './delivery.repository';

export const FAN_OUT_PROJECTION = 'webhook-fan-out';

/**
 * The outbox side of webhooks: each commerce lifecycle event becomes one delivery per enabled
 * endpoint of its organization that subscribes to its type (and existed when it was recorded).
 * Deliveries are scheduled in the projection's batch transaction, so they commit with its
 * checkpoint, exactly once; only then are they handed to the queue (`afterCommit`). A crash in
 * between leaves them pending in the store, and the next start re-enqueues them. A batch takes
 * a few statements: one for the endpoints, one append per thousand deliveries (all their streams).
 */
export function fanOutProjection(deliveries: DeliveryRepository, enqueue: (due: DueDelivery[]) => Promise<void>): Projection {
  const applyBatch = async (events: RecordedEvent[], tx: SqlExecutor): Promise<void> => {
    const orgs = [...new Set(events.map((e) => (e.data as Partial<CommerceEventData>)?.organization_id).filter((o): o is string => typeof o === 'string'))];
    if (orgs.length === 0) return;
    const rows = await tx.query<EndpointTarget>(
      `SELECT id, org_id, event_types, created_at FROM webhook_endpoints WHERE org_id = ANY($1::text[]) AND enabled AND deleted_at IS NULL ORDER BY id`,
      [orgs],
      { name: 'webhook_fan_out_targets' },
    );
    if (rows.length === 0) return;
    const byOrg = new Map<string, EndpointTarget[]>();
    for (const r of rows) byOrg.set(r.org_id, [...(byOrg.get(r.org_id) ?? []), r]);
    const scheduled: DeliveryScheduled[] = [];
    for (const event of events) {
      const orgId = (event.data as Partial<CommerceEventData>)?.organization_id;
      const recordedAt = Date.parse(event.recorded_at);
      // Endpoints that subscribe to the type and existed when the event was recorded.
      const targets = (typeof orgId === 'string' ? (byOrg.get(orgId) ?? []) : []).filter(
        (ep) => ep.event_types.includes(event.type) && new Date(ep.created_at).getTime() <= recordedAt,
      );
      if (targets.length === 0) continue;
      const body = webhookBody(event);
      for (const ep of targets) {
        scheduled.push({
          delivery_id: deliveryIdFor(event.event_id, ep.id),
          endpoint_id: ep.id,
          organization_id: orgId as string,
          webhook_id: event.event_id,
          event_type: event.type,
          transaction_id: body.transaction_id,
          event_recorded_at: event.recorded_at,
          body,
        });
      }
    }
    await deliveries.scheduleManyIn(tx, scheduled);
  };
  return {
    name: FAN_OUT_PROJECTION,
    filter: { eventTypes: [...WEBHOOK_EVENT_TYPES], streamPrefix: TRANSACTION_STREAM_PREFIX },
    apply: (event, tx) => applyBatch([event], tx),
    applyBatch,
    async afterCommit(events: RecordedEvent[]): Promise<void> {
      await enqueue(await deliveries.pendingForEvents(events.map((e) => e.event_id)));
    },
  };
}

interface EndpointTarget {
  id: string;
  org_id: string;
  event_types: string[];
  created_at: Date | string;
}
