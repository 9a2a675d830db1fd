import { BatchLoader } from '@app/core';
import type { SqlDatabase } from '@app/event-store';
import { AccessQueries, KeyRow, OrganizationRow } from './access-queries';

export type { KeyRow, OrganizationRow } from './access-queries';

/** Reads of the access read model (written only by the access projection). Nothing is cached: a revoked key fails at once everywhere. */
export class AccessReadModel extends AccessQueries {
  private readonly keyRows = new BatchLoader<KeyRow>(async (ids) => {
    const rows = await this.db.query<KeyRow>('SELECT * FROM api_keys WHERE key_id = ANY($1::text[])', [ids], { name: 'access_keys_by_ids' });
    return new Map(rows.map((r) => [r.key_id, r]));
  });

  constructor(private readonly db: SqlDatabase) {
    super();
  }

  /** A key's row, read now; lookups of one moment share one query. */
  keyRow(keyId: string): Promise<KeyRow | undefined> {
    return this.keyRows.load(keyId);
  }

  async organization(orgId: string): Promise<OrganizationRow | null> {
    const [row] = await this.db.query<OrganizationRow>('SELECT org_id, name, kind, created_at FROM organizations WHERE org_id = $1', [orgId]);
    return row ?? null;
  }

  async countOrganizations(): Promise<number> {
    const [row] = await this.db.query<{ n: string | number }>('SELECT count(*) AS n FROM organizations');
    return Number(row.n);
  }

  keysOf(orgId: string): Promise<KeyRow[]> {
    return this.db.query<KeyRow>('SELECT * FROM api_keys WHERE org_id = $1 ORDER BY created_at, key_id', [orgId]);
  }

  async key(keyId: string): Promise<KeyRow | null> {
    const [row] = await this.db.query<KeyRow>('SELECT * FROM api_keys WHERE key_id = $1', [keyId]);
    return row ?? null;
  }
}
