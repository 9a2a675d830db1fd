import type { InlineProjection, RowChange } from '@app/event-store';
import { API_KEY_CREATED, API_KEY_REVOKED, ORGANIZATION_CREATED } from '../domain/organization.aggregate';
import type { ApiKeyCreated, ApiKeyRevoked, OrganizationCreated } from '../domain/organization.aggregate';

export type { ApiKeyCreated, ApiKeyRevoked, OrganizationCreated, OrganizationKind } from '../domain/organization.aggregate';
export { API_KEY_CREATED, API_KEY_REVOKED, ORGANIZATION_CREATED } from '../domain/organization.aggregate';

export const organizationStream = (orgId: string) => `organization-${orgId}`;

/** The access read model (organizations, api_keys), written with each event of an organization stream. */
export const accessProjection: InlineProjection = {
  name: 'access',
  filter: { eventTypes: [ORGANIZATION_CREATED, API_KEY_CREATED, API_KEY_REVOKED], streamPrefix: 'organization-' },
  tables: ['organizations', 'api_keys'],
  apply(event): RowChange[] {
    switch (event.type) {
      case ORGANIZATION_CREATED: {
        const e = event.data as OrganizationCreated;
        return [{ op: 'insert', table: 'organizations', key: ['org_id'], row: { org_id: e.org_id, name: e.name, kind: e.kind, created_at: event.recorded_at } }];
      }
      case API_KEY_CREATED: {
        const e = event.data as ApiKeyCreated;
        const row = { key_id: e.key_id, org_id: e.org_id, mode: e.mode, scopes: e.scopes, secret_hash: e.secret_hash, name: e.name, owner: e.owner ?? null, created_by: e.created_by ?? null, created_at: event.recorded_at, expires_at: e.expires_at };
        return [{ op: 'insert', table: 'api_keys', key: ['key_id'], row }];
      }
      case API_KEY_REVOKED: {
        const e = event.data as ApiKeyRevoked;
        // The aggregate records a key's revocation once (a second is no event), so this is its only time.
        return [{ op: 'update', table: 'api_keys', key: { key_id: e.key_id }, set: { revoked_at: event.recorded_at } }];
      }
      default:
        return [];
    }
  },
};
