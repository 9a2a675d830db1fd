import { isoOrNull } from '@app/core';
import type { SqlDatabase } from '@app/event-store';
import { decodePageCursor, encodePageCursor } from '@app/http';
import type { CertificateItem } from '../pages/certificates.pages';

type Row = Omit<CertificateItem, 'created_at'> & { created_at: Date | string };

/**
 * The organization's certificates, published or not, from the registry's read model (its
 * `registry_org` index). The API lists an organization's private entries (GET /v1/registry?
 * visibility=private) and everyone's public ones, but no listing gives one organization's
 * certificates of both kinds, which is what this page shows; it reads the same table.
 */
export class ConsoleCertificates {
  constructor(private readonly db: SqlDatabase) {}

  async page(orgId: string, cursor: string | undefined, limit = 25): Promise<{ items: CertificateItem[]; next_cursor: string | null }> {
    const after = cursor ? decodePageCursor(cursor) : null;
    const rows = await this.db.query<Row>(
      `SELECT id, title, artifact_type, certificate_id, artifact_hash, visibility, created_at FROM registry_entries
       WHERE org_id = $1 AND status = 'certified' ${after ? 'AND (created_at, id) < ($3::timestamptz, $4)' : ''}
       ORDER BY created_at DESC, id DESC LIMIT $2`,
      after ? [orgId, limit + 1, after.at, after.id] : [orgId, limit + 1],
    );
    const items = rows.slice(0, limit).map((r) => ({ ...r, created_at: isoOrNull(r.created_at)! }));
    const last = items[items.length - 1];
    return { items, next_cursor: rows.length > limit ? encodePageCursor(last.created_at, last.id) : null };
  }
}
