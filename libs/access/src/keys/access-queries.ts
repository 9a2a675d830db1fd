import { isoOrNull } from '@app/core';
import type { KeyMode } from '../domain/api-key';
import type { ApiKeyCreated, OrganizationKind } from '../domain/organization.aggregate';
import type { Scope } from '../domain/scopes';

/** The read-model row: the creation event's facts plus when it was created and revoked. */
export type KeyRow = Omit<ApiKeyCreated, 'expires_at'> & {
  created_at: Date | string;
  expires_at: Date | string | null;
  revoked_at: Date | string | null;
};

export interface OrganizationRow {
  org_id: string;
  name: string;
  kind: OrganizationKind;
  created_at: Date | string;
}

/**
 * Reads of the access read model (organizations, api_keys), written only by the access
 * projection. The SQL one is AccessReadModel; handler specs read the in-memory store's rows.
 */
export abstract class AccessQueries {
  /** A key's row, read now; lookups of one moment share one query. */
  abstract keyRow(keyId: string): Promise<KeyRow | undefined>;
  abstract organization(orgId: string): Promise<OrganizationRow | null>;
  abstract countOrganizations(): Promise<number>;
  abstract keysOf(orgId: string): Promise<KeyRow[]>;
  abstract key(keyId: string): Promise<KeyRow | null>;
}

export interface Organization {
  org_id: string;
  name: string;
  kind: OrganizationKind;
  created_at: string;
}

/** A key as listed: never the secret, never its hash. */
export interface ApiKeyView {
  key_id: string;
  org_id: string;
  mode: KeyMode;
  scopes: Scope[];
  name: string | null;
  owner: string | null;
  created_by: string | null;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  status: 'active' | 'revoked' | 'expired';
}

export const organizationView = (row: OrganizationRow): Organization => ({ ...row, created_at: isoOrNull(row.created_at)! });

/** A key row as shown: its status as of `now`. */
export function apiKeyView(r: KeyRow, now: Date): ApiKeyView {
  const expiresAt = isoOrNull(r.expires_at);
  const status = r.revoked_at ? 'revoked' : expiresAt && Date.parse(expiresAt) <= now.getTime() ? 'expired' : 'active';
  return {
    key_id: r.key_id,
    org_id: r.org_id,
    mode: r.mode,
    scopes: r.scopes,
    name: r.name,
    owner: r.owner ?? null,
    created_by: r.created_by ?? null,
    created_at: isoOrNull(r.created_at)!,
    expires_at: expiresAt,
    revoked_at: isoOrNull(r.revoked_at),
    status,
  };
}
