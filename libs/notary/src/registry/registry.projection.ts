import { InlineProjection, Json, RowChange, subscribedReadModel } from '@app/event-store';
import type { CertificateIssuedData as CertificateIssued } from '../domain/certificate.aggregate';
import { ARTIFACT_TYPES, ArtifactType } from '../domain/artifact-types';
import type { RegistryEntryEdited, RegistryEntryRegistered } from '../domain/registry-entry.aggregate';

export { ARTIFACT_TYPES } from '../domain/artifact-types';
export type { ArtifactType } from '../domain/artifact-types';
export type { RegistryEntryEdited, RegistryEntryRegistered } from '../domain/registry-entry.aggregate';

const slugify = (title: string, id: string) =>
  `${title
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60) || 'artifact'}-${id.slice(0, 8)}`;

// rows_count is an integer column: a legacy payload's rows may be absent or out of its range.
const rowsCount = (rows: unknown) => (Number.isInteger(rows) && (rows as number) >= 0 && (rows as number) <= 2_147_483_647 ? (rows as number) : null);

/**
 * The public registry, a projection of the certificate streams (and of entries registered
 * without a certificate), applied by a checkpointed runner in the workers: a new certificate or
 * edit shows up moments after it is made. New certificates are listed `private` until their
 * owner publishes them. The text search column is computed by the table (migration notary_012).
 */
export const registryReadModel: InlineProjection = {
  name: 'registry',
  filter: { eventTypes: ['certificate.issued', 'certificate.imported', 'registry_entry.registered', 'registry_entry.edited'] },
  tables: ['registry_entries'],
  apply(event): RowChange[] {
    // Imported legacy certificates are listed like issued ones (their payload may lack rows).
    if (event.type === 'certificate.issued' || event.type === 'certificate.imported') {
      const { org_id, manifest, visibility } = event.data as CertificateIssued & { visibility?: 'public' | 'private' };
      const p = manifest.payload;
      // PostgreSQL text cannot hold U+0000, which a JSON string can.
      const title = (typeof p.filename === 'string' && p.filename.replaceAll('\u0000', '')) || `Certificate ${p.certification_id.slice(0, 8)}`;
      const type = ARTIFACT_TYPES.includes(p.artifact_type as ArtifactType) ? (p.artifact_type as ArtifactType) : 'output';
      const row = {
        id: p.certification_id, org_id, slug: slugify(title, p.certification_id), title, summary: null, artifact_type: type, status: 'certified',
        certificate_id: p.certification_id, artifact_hash: p.dataset_hash, rows_count: rowsCount(p.rows), industry: null, tags: [], visibility: visibility === 'public' ? 'public' : 'private',
        created_at: event.recorded_at, updated_at: event.recorded_at,
      };
      return [{ op: 'insert', table: 'registry_entries', key: ['id'], row }];
    }
    if (event.type === 'registry_entry.registered') {
      const e = event.data as RegistryEntryRegistered;
      const row = {
        id: e.entry_id, org_id: e.org_id, slug: slugify(e.title, e.entry_id), title: e.title, summary: e.summary, artifact_type: e.artifact_type, status: 'unverified',
        certificate_id: null, artifact_hash: null, rows_count: null, industry: e.industry, tags: e.tags, visibility: e.visibility,
        created_at: event.recorded_at, updated_at: event.recorded_at,
      };
      return [{ op: 'insert', table: 'registry_entries', key: ['id'], row }];
    }
    if (event.type === 'registry_entry.edited') {
      const e = event.data as RegistryEntryEdited;
      // Absent fields stay as they were; summary and industry may be set to null.
      const set: Record<string, Json> = { updated_at: event.recorded_at };
      if (e.title !== undefined && e.title !== null) set.title = e.title;
      if ('summary' in e) set.summary = e.summary ?? null;
      if ('industry' in e) set.industry = e.industry ?? null;
      if (e.tags !== undefined && e.tags !== null) set.tags = e.tags;
      if (e.visibility !== undefined && e.visibility !== null) set.visibility = e.visibility;
      return [{ op: 'update', table: 'registry_entries', key: { id: e.entry_id }, set }];
    }
    return [];
  },
};

/** The registry as the workers run it: applied from `$all` by a checkpointed runner. */
export const registryProjection = subscribedReadModel(registryReadModel);
