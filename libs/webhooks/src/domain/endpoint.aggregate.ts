import { DomainError } from '@app/core';
import { WEBHOOK_EVENT_TYPES, WebhookEvents } from './event-types';
import type { EndpointCreated, EndpointDeleted, EndpointDisabled, EndpointSecretRotated, EndpointUpdated } from './endpoint.events';

/**
 * The WebhookEndpoint aggregate: one stream per endpoint (`webhook-endpoint-<id>`). `apply`
 * folds its events; each decision returns the events to append at the state's revision or
 * throws a DomainError. Pure: the target's DNS check and the sealed secrets live outside.
 */
export interface EndpointState {
  id: string;
  org_id: string;
  url: string;
  event_types: string[];
  description: string | null;
  enabled: boolean;
  deleted: boolean;
  /** Stream revision of the last event. */
  revision: number;
}

export interface EndpointEvent {
  type: string;
  data: unknown;
}

/** After a rotation the previous secret keeps signing beside the new one this long. */
export const SECRET_OVERLAP_MS = 24 * 3600 * 1000;
export const MAX_ENDPOINTS_PER_ORG = 100;

/** Keeps the spec's order and drops repeats. */
export const normalizeTypes = (types: readonly string[]): string[] => WEBHOOK_EVENT_TYPES.filter((t) => types.includes(t));

export function applyEndpoint(s: EndpointState | null, e: EndpointEvent, revision: number): EndpointState {
  if (e.type === WebhookEvents.endpointCreated) {
    const d = e.data as EndpointCreated;
    return { id: d.endpoint_id, org_id: d.organization_id, url: d.url, event_types: d.event_types, description: d.description, enabled: d.enabled, deleted: false, revision };
  }
  if (!s) throw new Error(`${e.type} before webhook.endpoint_created`);
  switch (e.type) {
    case WebhookEvents.endpointUpdated: {
      const d = e.data as EndpointUpdated;
      return {
        ...s,
        url: d.url ?? s.url,
        event_types: d.event_types ?? s.event_types,
        description: 'description' in d ? (d.description ?? null) : s.description,
        enabled: d.enabled ?? s.enabled,
        revision,
      };
    }
    case WebhookEvents.endpointDisabled:
      return { ...s, enabled: false, revision };
    case WebhookEvents.endpointDeleted:
      return { ...s, enabled: false, deleted: true, revision };
    default:
      return { ...s, revision };
  }
}

/** The endpoint's state from its stream's events (revision 0 first); null for none. */
export const foldEndpoint = (events: readonly EndpointEvent[]): EndpointState | null =>
  events.reduce<EndpointState | null>((s, e, i) => applyEndpoint(s, e, i), null);

export interface NewEndpoint {
  id: string;
  orgId: string;
  url: string;
  event_types?: readonly string[];
  description?: string | null;
  enabled?: boolean;
  secretId: string;
}

export function createEndpoint(n: NewEndpoint): EndpointEvent[] {
  const data: EndpointCreated = {
    endpoint_id: n.id,
    organization_id: n.orgId,
    url: n.url,
    event_types: normalizeTypes(n.event_types ?? WEBHOOK_EVENT_TYPES),
    description: n.description ?? null,
    enabled: n.enabled ?? true,
    secret_id: n.secretId,
  };
  return [{ type: WebhookEvents.endpointCreated, data }];
}

/** The caller's live endpoint; another organization's answers like a missing one. */
export function ownedEndpoint(s: EndpointState | null, orgId: string, id: string): EndpointState {
  if (!s || s.org_id !== orgId || s.deleted) throw new DomainError('not_found', `webhook endpoint ${id} not found`);
  return s;
}

export interface EndpointEdit {
  url?: string;
  event_types?: readonly string[];
  description?: string | null;
  enabled?: boolean;
}

export function updateEndpoint(s: EndpointState, changes: EndpointEdit): EndpointEvent[] {
  const data: EndpointUpdated = { endpoint_id: s.id, organization_id: s.org_id };
  if (changes.url !== undefined) data.url = changes.url;
  if (changes.event_types !== undefined) data.event_types = normalizeTypes(changes.event_types);
  if (changes.description !== undefined) data.description = changes.description;
  if (changes.enabled !== undefined) data.enabled = changes.enabled;
  return [{ type: WebhookEvents.endpointUpdated, data }];
}

export function rotateEndpointSecret(s: EndpointState, secretId: string, now: Date): { events: EndpointEvent[]; previousExpireAt: Date } {
  const until = new Date(now.getTime() + SECRET_OVERLAP_MS);
  const data: EndpointSecretRotated = { endpoint_id: s.id, organization_id: s.org_id, secret_id: secretId, previous_secrets_expire_at: until.toISOString() };
  return { events: [{ type: WebhookEvents.endpointSecretRotated, data }], previousExpireAt: until };
}

/** Disabled by its deliveries (410 Gone, or failing too long); nothing when it is not enabled any more. */
export function disableEndpoint(s: EndpointState | null, why: Pick<EndpointDisabled, 'reason' | 'delivery_id' | 'failing_since'>): EndpointEvent[] {
  if (!s || s.deleted || !s.enabled) return [];
  const data: EndpointDisabled = { endpoint_id: s.id, organization_id: s.org_id, ...why };
  return [{ type: WebhookEvents.endpointDisabled, data }];
}

export function deleteEndpoint(s: EndpointState): EndpointEvent[] {
  const data: EndpointDeleted = { endpoint_id: s.id, organization_id: s.org_id };
  return [{ type: WebhookEvents.endpointDeleted, data }];
}

/** Test pings and recoveries go only to an enabled endpoint. */
export function assertEnabled(s: Pick<EndpointState, 'id' | 'enabled' | 'deleted'> | null, id: string): void {
  if (!s || s.deleted || !s.enabled) throw endpointDisabledError(id);
}

export const endpointDisabledError = (id: string) => new DomainError('webhook_endpoint_disabled', `Webhook endpoint ${id} is disabled or deleted; enable it first`);
