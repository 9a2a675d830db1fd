import type { RecordedEvent, SqlExecutor } from '@app/event-store';
import type { KeyMode } from '../domain/api-key';
import type { Scope } from '../domain/scopes';

export type OrganizationKind = 'standard' | 'sandbox' | 'demo';

export interface OrganizationCreated {
  org_id: string;
  name: string;
  kind: OrganizationKind;
}

/** Carries the key's hash, never the key. */
export interface ApiKeyCreated {
  key_id: string;
  org_id: string;
  mode: KeyMode;
  scopes: Scope[];
  secret_hash: string;
  name: string | null;
  expires_at: string | null;
}

export interface ApiKeyRevoked {
  key_id: string;
  org_id: string;
  reason: string | null;
}

export const organizationStream = (orgId: string) => `organization-${orgId}`;

/** The access read model, applied to each event of an organization stream. */
export async function applyAccessEvent(event: RecordedEvent, tx: SqlExecutor): Promise<void> {
  switch (event.type) {
    case 'OrganizationCreated': {
      const e = event.data as OrganizationCreated;
      await tx.query('INSERT INTO organizations (org_id, name, kind, created_at) VALUES ($1, $2, $3, $4) ON CONFLICT (org_id) DO NOTHING', [
        e.org_id,
        e.name,
        e.kind,
        event.recorded_at,
      ]);
      return;
    }
    case 'ApiKeyCreated': {
      const e = event.data as ApiKeyCreated;
      await tx.query(
        `INSERT INTO api_keys (key_id, org_id, mode, scopes, secret_hash, name, created_at, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (key_id) DO NOTHING`,
        [e.key_id, e.org_id, e.mode, e.scopes, e.secret_hash, e.name, event.recorded_at, e.expires_at],
      );
      return;
    }
    case 'ApiKeyRevoked': {
      const e = event.data as ApiKeyRevoked;
      await tx.query('UPDATE api_keys SET revoked_at = $2 WHERE key_id = $1 AND revoked_at IS NULL', [e.key_id, event.recorded_at]);
      return;
    }
  }
}
