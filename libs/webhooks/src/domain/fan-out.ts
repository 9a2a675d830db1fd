import type { RecordedEvent } from '@app/event-store';
import type { DeliveryScheduled } from './delivery.events';
import { deliveryIdFor } from './ids';
import { CommerceEventData, webhookBody } from './payload';

export interface FanOutEndpoint {
  id: string;
  org_id: string;
  event_types: readonly string[];
  created_at: Date | string;
}

/** The organizations whose endpoints these commerce events may go to. */
export const organizationsOf = (events: readonly RecordedEvent[]): string[] => [
  ...new Set(events.map((e) => (e.data as Partial<CommerceEventData>)?.organization_id).filter((o): o is string => typeof o === 'string')),
];

/**
 * The outbox side of webhooks: each commerce lifecycle event becomes one delivery per enabled
 * endpoint of its organization that subscribes to its type and existed when it was recorded.
 * Delivery ids derive from (event, endpoint), so planning the same events twice plans the same.
 */
export function planDeliveries(events: readonly RecordedEvent[], endpoints: readonly FanOutEndpoint[]): DeliveryScheduled[] {
  const byOrg = new Map<string, FanOutEndpoint[]>();
  for (const ep of endpoints) byOrg.set(ep.org_id, [...(byOrg.get(ep.org_id) ?? []), ep]);
  const scheduled: DeliveryScheduled[] = [];
  for (const event of events) {
    const orgId = (event.data as Partial<CommerceEventData>)?.organization_id;
    const recordedAt = Date.parse(event.recorded_at);
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
  return scheduled;
}
