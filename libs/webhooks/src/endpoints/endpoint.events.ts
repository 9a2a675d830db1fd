import type { RecordedEvent, SqlExecutor } from '@app/event-store';
import { WebhookEvents } from '../domain/event-types';

/** Events of `webhook-endpoint-<id>` streams. Secrets never appear in them (only secret ids). */
export interface EndpointCreated {
  endpoint_id: string;
  organization_id: string;
  url: string;
  event_types: string[];
  description: string | null;
  enabled: boolean;
  secret_id: string;
}

export interface EndpointUpdated {
  endpoint_id: string;
  organization_id: string;
  url?: string;
  event_types?: string[];
  description?: string | null;
  enabled?: boolean;
}

export interface EndpointSecretRotated {
  endpoint_id: string;
  organization_id: string;
  secret_id: string;
  /** Until when the previous secrets keep signing beside the new one. */
  previous_secrets_expire_at: string;
}

export interface EndpointDisabled {
  endpoint_id: string;
  organization_id: string;
  reason: 'gone' | 'failing';
  /** The delivery whose answer (410) disabled it. */
  delivery_id?: string;
  /** Since when every attempt has failed. */
  failing_since?: string;
}

export interface EndpointDeleted {
  endpoint_id: string;
  organization_id: string;
}

/** Applies one endpoint event to the read model, in the appending transaction. */
export async function applyEndpointEvent(e: RecordedEvent, tx: SqlExecutor): Promise<void> {
  const at = e.recorded_at;
  switch (e.type) {
    case WebhookEvents.endpointCreated: {
      const d = e.data as EndpointCreated;
      await tx.query(
        `INSERT INTO webhook_endpoints (id, org_id, url, event_types, description, enabled, revision, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)`,
        [d.endpoint_id, d.organization_id, d.url, d.event_types, d.description, d.enabled, e.revision, at],
      );
      return;
    }
    case WebhookEvents.endpointUpdated: {
      const d = e.data as EndpointUpdated;
      await tx.query(
        `UPDATE webhook_endpoints SET
           url = coalesce($2, url),
           event_types = coalesce($3::text[], event_types),
           description = CASE WHEN $4::boolean THEN $5 ELSE description END,
           enabled = coalesce($6::boolean, enabled),
           disabled_reason = CASE WHEN $6::boolean THEN NULL WHEN NOT $6::boolean THEN 'manual' ELSE disabled_reason END,
           disabled_at = CASE WHEN $6::boolean THEN NULL WHEN NOT $6::boolean THEN $8::timestamptz ELSE disabled_at END,
           failing_since = CASE WHEN $6::boolean THEN NULL ELSE failing_since END,
           revision = $7, updated_at = $8
         WHERE id = $1`,
        [d.endpoint_id, d.url ?? null, d.event_types ?? null, 'description' in d, d.description ?? null, d.enabled ?? null, e.revision, at],
      );
      return;
    }
    case WebhookEvents.endpointSecretRotated:
      await tx.query('UPDATE webhook_endpoints SET revision = $2, updated_at = $3 WHERE id = $1', [(e.data as EndpointSecretRotated).endpoint_id, e.revision, at]);
      return;
    case WebhookEvents.endpointDisabled: {
      const d = e.data as EndpointDisabled;
      await tx.query(
        `UPDATE webhook_endpoints SET enabled = false, disabled_reason = $2, disabled_at = $4, revision = $3, updated_at = $4 WHERE id = $1`,
        [d.endpoint_id, d.reason, e.revision, at],
      );
      return;
    }
    case WebhookEvents.endpointDeleted:
      await tx.query('UPDATE webhook_endpoints SET deleted_at = $3, enabled = false, revision = $2, updated_at = $3 WHERE id = $1', [
        (e.data as EndpointDeleted).endpoint_id,
        e.revision,
        at,
      ]);
      return;
  }
}
