import type { Projection, RecordedEvent, SqlExecutor } from '@app/event-store';
import type { CertificateIssued } from '../certificates/certificate.service';

export const ARTIFACT_TYPES = ['dataset', 'model', 'system', 'output'] as const;
export type ArtifactType = (typeof ARTIFACT_TYPES)[number];

/** Edits an owner makes to its entry; absent fields stay as they were. */
export interface RegistryEntryEdited {
  entry_id: string;
  title?: string;
  summary?: string | null;
  industry?: string | null;
  tags?: string[];
  visibility?: 'public' | 'private';
}

/** An artifact listed without a certificate (status `unverified`). */
export interface RegistryEntryRegistered {
  entry_id: string;
  org_id: string;
  title: string;
  summary: string | null;
  artifact_type: ArtifactType;
  industry: string | null;
  tags: string[];
  visibility: 'public' | 'private';
}

const slugify = (title: string, id: string) =>
  `${title
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60) || 'artifact'}-${id.slice(0, 8)}`;

// rows_count is an integer column: a legacy payload's rows may be absent or out of its range.
const rowsCount = (rows: unknown) => (Number.isInteger(rows) && (rows as number) >= 0 && (rows as number) <= 2_147_483_647 ? (rows as number) : null);

// The text search covers title, summary and tags; recomputed in SQL on every write.
const SEARCH = `to_tsvector('simple', coalesce(title, '') || ' ' || coalesce(summary, '') || ' ' || coalesce(array_to_string(tags, ' '), ''))`;

/**
 * The public registry, a projection of the certificate streams (and of entries registered
 * without a certificate). New certificates are listed `private` until their owner publishes them.
 */
export const registryProjection: Projection = {
  name: 'registry',
  filter: { eventTypes: ['CertificateIssued', 'CertificateImported', 'RegistryEntryRegistered', 'RegistryEntryEdited'] },
  async apply(event: RecordedEvent, tx: SqlExecutor): Promise<void> {
    // Imported legacy certificates are listed like issued ones (their payload may lack rows).
    if (event.type === 'CertificateIssued' || event.type === 'CertificateImported') {
      const { org_id, manifest } = event.data as CertificateIssued;
      const p = manifest.payload;
      // PostgreSQL text cannot hold U+0000, which a JSON string can.
      const title = (typeof p.filename === 'string' && p.filename.replaceAll('\u0000', '')) || `Certificate ${p.certification_id.slice(0, 8)}`;
      const type = ARTIFACT_TYPES.includes(p.artifact_type as ArtifactType) ? (p.artifact_type as ArtifactType) : 'output';
      await tx.query(
        `INSERT INTO registry_entries (id, org_id, slug, title, summary, artifact_type, status, certificate_id, artifact_hash, rows_count,
                                       industry, tags, visibility, created_at, updated_at, search)
         VALUES ($1, $2, $3, $4, NULL, $5, 'certified', $9, $6, $7, NULL, '{}', 'private', $8, $8, to_tsvector('simple', $4))
         ON CONFLICT (id) DO NOTHING`,
        [p.certification_id, org_id, slugify(title, p.certification_id), title, type, p.dataset_hash, rowsCount(p.rows), event.recorded_at, p.certification_id],
      );
      return;
    }
    if (event.type === 'RegistryEntryRegistered') {
      const e = event.data as RegistryEntryRegistered;
      await tx.query(
        `INSERT INTO registry_entries (id, org_id, slug, title, summary, artifact_type, status, certificate_id, artifact_hash, rows_count,
                                       industry, tags, visibility, created_at, updated_at, search)
         VALUES ($1, $2, $3, $4, $5, $6, 'unverified', NULL, NULL, NULL, $7, $8, $9, $10, $10, to_tsvector('simple', ''))
         ON CONFLICT (id) DO NOTHING`,
        [e.entry_id, e.org_id, slugify(e.title, e.entry_id), e.title, e.summary, e.artifact_type, e.industry, e.tags, e.visibility, event.recorded_at],
      );
      await tx.query(`UPDATE registry_entries SET search = ${SEARCH} WHERE id = $1`, [e.entry_id]);
      return;
    }
    if (event.type === 'RegistryEntryEdited') {
      const e = event.data as RegistryEntryEdited;
      await tx.query(
        `UPDATE registry_entries SET
           title = coalesce($2, title),
           summary = CASE WHEN $3::boolean THEN $4 ELSE summary END,
           industry = CASE WHEN $5::boolean THEN $6 ELSE industry END,
           tags = coalesce($7::text[], tags),
           visibility = coalesce($8, visibility),
           updated_at = $9
         WHERE id = $1`,
        [e.entry_id, e.title ?? null, 'summary' in e, e.summary ?? null, 'industry' in e, e.industry ?? null, e.tags ?? null, e.visibility ?? null, event.recorded_at],
      );
      await tx.query(`UPDATE registry_entries SET search = ${SEARCH} WHERE id = $1`, [e.entry_id]);
    }
  },
};
