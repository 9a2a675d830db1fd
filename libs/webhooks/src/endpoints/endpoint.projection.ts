import { eventFact, increment, InlineProjection, Json, RowChange } from '@app/event-store';
import { MAX_ENDPOINTS_PER_ORG } from '../domain/endpoint.aggregate';
import type { EndpointCreated, EndpointDisabled, EndpointUpdated } from '../domain/endpoint.events';
import { WebhookEvents } from '../domain/event-types';

export const ENDPOINT_LIMIT_CONSTRAINT = 'webhook_endpoint_limit';

/**
 * The endpoints read model and the count of each organization's live endpoints (its CHECK
 * constraint is the per-organization limit, so concurrent registrations cannot pass it), one
 * projection of the endpoint streams written with each append.
 */
export const endpointsProjection: InlineProjection = {
  name: 'webhook_endpoints',
  filter: {
    eventTypes: [WebhookEvents.endpointCreated, WebhookEvents.endpointUpdated, WebhookEvents.endpointSecretRotated, WebhookEvents.endpointDisabled, WebhookEvents.endpointDeleted],
    streamPrefix: 'webhook-endpoint-',
  },
  tables: ['webhook_endpoints', 'webhook_endpoint_counts'],
  checks: [{ name: ENDPOINT_LIMIT_CONSTRAINT, table: 'webhook_endpoint_counts', holds: (row) => Number(row.active) <= MAX_ENDPOINTS_PER_ORG }],
  apply(e): RowChange[] {
    const d = e.data as { endpoint_id: string; organization_id: string };
    const key = { id: d.endpoint_id };
    const at = e.recorded_at;
    const touched = { revision: eventFact('revision'), updated_at: at };
    const count = (by: number): RowChange => ({
      op: 'insert',
      table: 'webhook_endpoint_counts',
      key: ['org_id'],
      row: { org_id: d.organization_id, active: increment(by) },
      onConflict: { update: ['active'] },
    });
    switch (e.type) {
      case WebhookEvents.endpointCreated: {
        const c = e.data as EndpointCreated;
        const row = { id: c.endpoint_id, org_id: c.organization_id, url: c.url, event_types: c.event_types, description: c.description, enabled: c.enabled, created_at: at, ...touched };
        return [{ op: 'insert', table: 'webhook_endpoints', key: ['id'], row }, count(1)];
      }
      case WebhookEvents.endpointUpdated: {
        const u = e.data as EndpointUpdated;
        const set: Record<string, Json | ReturnType<typeof eventFact>> = { ...touched };
        if (u.url !== undefined) set.url = u.url;
        if (u.event_types !== undefined) set.event_types = u.event_types;
        if ('description' in u) set.description = u.description ?? null;
        if (u.enabled !== undefined) {
          set.enabled = u.enabled;
          set.disabled_reason = u.enabled ? null : 'manual';
          set.disabled_at = u.enabled ? null : at;
        }
        return [{ op: 'update', table: 'webhook_endpoints', key, set }];
      }
      case WebhookEvents.endpointDisabled:
        return [{ op: 'update', table: 'webhook_endpoints', key, set: { enabled: false, disabled_reason: (e.data as EndpointDisabled).reason, disabled_at: at, ...touched } }];
      case WebhookEvents.endpointDeleted:
        return [{ op: 'update', table: 'webhook_endpoints', key, set: { deleted_at: at, enabled: false, ...touched } }, count(-1)];
      default:
        return [{ op: 'update', table: 'webhook_endpoints', key, set: touched }];
    }
  },
};
