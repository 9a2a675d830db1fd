import { BatchLoader } from '@app/core';
import type { SqlDatabase } from '@app/event-store';
import type { CertificateRow } from './certificate-cache';

/**
 * Reads of the certificates read model (written only by the certificates projection). Lookups of
 * the same moment share one query.
 */
export class CertificateReadModel {
  private readonly rows = new BatchLoader<CertificateRow>((ids) => this.loadRows(ids));

  constructor(private readonly db: SqlDatabase) {}

  row(certificateId: string): Promise<CertificateRow | undefined> {
    return this.rows.load(certificateId);
  }

  private async loadRows(ids: string[]): Promise<Map<string, CertificateRow>> {
    const rows = await this.db.query<CertificateRow>(
      'SELECT certificate_id, payload::text AS payload, signature, key_id, imported FROM certificates WHERE certificate_id = ANY($1::uuid[])',
      [ids],
      { name: 'notary_certificates_by_ids' },
    );
    return new Map(rows.map((r) => [r.certificate_id, r]));
  }

  async predictionManifest(certificateId: string): Promise<{ manifest_hash: string; prediction_hashes: string[] } | null> {
    const [row] = await this.db.query<{ manifest_hash: string; prediction_hashes: string[] }>(
      'SELECT manifest_hash, prediction_hashes FROM prediction_manifests WHERE certificate_id = $1',
      [certificateId],
    );
    return row ?? null;
  }

  /** Credits an organization bought (the issuance allowance beyond the free quota). */
  async creditsPurchased(orgId: string): Promise<number> {
    const [row] = await this.db.query<{ purchased: number }>('SELECT purchased FROM notary_credits WHERE org_id = $1', [orgId]);
    return row ? Number(row.purchased) : 0;
  }

  /** The certificates issued for an artifact hash, newest first (at most 100). */
  async idsByHash(datasetHash: string): Promise<string[]> {
    const rows = await this.db.query<{ certificate_id: string }>('SELECT certificate_id FROM certificates WHERE dataset_hash = $1 ORDER BY issued_at DESC LIMIT 100', [datasetHash]);
    return rows.map((r) => r.certificate_id);
  }
}
