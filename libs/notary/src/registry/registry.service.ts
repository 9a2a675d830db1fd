import { randomUUID } from 'node:crypto';
import { AppError } from '@app/core';
import { SqlDatabase, SqlEventStore } from '@app/event-store';
import { certificateStream } from '../certificates/certificate.service';
import type { CertificateIssued } from '../certificates/certificate.service';
import { ArtifactType, RegistryEntryEdited, RegistryEntryRegistered } from './registry.projection';

export interface RegistryQuery {
  status?: 'certified' | 'unverified';
  artifact_type?: ArtifactType;
  industry?: string;
  q?: string;
  visibility: 'public' | 'private';
  limit: number;
  cursor?: string;
}

interface Row {
  id: string;
  slug: string;
  title: string;
  summary: string | null;
  artifact_type: string;
  status: string;
  certificate_id: string | null;
  artifact_hash: string | null;
  rows_count: number | null;
  industry: string | null;
  tags: string[];
  visibility: string;
  created_at: Date | string;
}

const registryStream = (id: string) => `registry-${id}`;

/** Cursor = the last item's (created_at, id), opaque to clients. */
const encodeCursor = (r: Row) => Buffer.from(JSON.stringify([new Date(r.created_at).toISOString(), r.id])).toString('base64url');
function decodeCursor(cursor: string): [string, string] {
  try {
    const [at, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as [unknown, unknown];
    if (typeof at === 'string' && !Number.isNaN(Date.parse(at)) && typeof id === 'string' && id.length <= 64) return [at, id];
  } catch {
    /* fall through */
  }
  throw new AppError('validation_failed', 'cursor is not one this service issued', 400, [{ field: 'cursor', message: 'invalid cursor' }]);
}

export class RegistryService {
  constructor(
    private readonly db: SqlDatabase,
    private readonly store: SqlEventStore,
    private readonly baseUrl: string,
  ) {}

  /** A page of entries, newest first; `private` lists only the caller's organization. */
  async list(query: RegistryQuery, orgId?: string) {
    const params: unknown[] = [query.visibility];
    let where = 'visibility = $1';
    const add = (clause: string, value: unknown) => {
      params.push(value);
      where += ` AND ${clause.replace('?', `$${params.length}`)}`;
    };
    if (query.visibility === 'private') add('org_id = ?', orgId);
    if (query.status) add('status = ?', query.status);
    if (query.artifact_type) add('artifact_type = ?', query.artifact_type);
    if (query.industry) add('industry = ?', query.industry);
    if (query.q) add(`search @@ websearch_to_tsquery('simple', ?)`, query.q);
    const filterParams = [...params];
    const filterWhere = where;
    if (query.cursor) {
      const [at, id] = decodeCursor(query.cursor);
      params.push(at, id);
      where += ` AND (created_at, id) < ($${params.length - 1}::timestamptz, $${params.length})`;
    }
    params.push(query.limit + 1);
    const [rows, [{ n }]] = await Promise.all([
      this.db.query<Row>(
        `SELECT id, slug, title, summary, artifact_type, status, certificate_id, artifact_hash, rows_count, industry, tags, visibility, created_at
         FROM registry_entries WHERE ${where} ORDER BY created_at DESC, id DESC LIMIT $${params.length}`,
        params,
      ),
      this.db.query<{ n: string | number }>(`SELECT count(*) AS n FROM registry_entries WHERE ${filterWhere}`, filterParams),
    ]);
    const page = rows.slice(0, query.limit);
    return {
      items: page.map((r) => this.view(r)),
      total: Number(n),
      next_cursor: rows.length > query.limit ? encodeCursor(page[page.length - 1]) : null,
    };
  }

  async register(orgId: string, entry: Omit<RegistryEntryRegistered, 'entry_id' | 'org_id'>): Promise<{ id: string }> {
    const id = randomUUID();
    const data: RegistryEntryRegistered = { entry_id: id, org_id: orgId, ...entry };
    await this.store.append(registryStream(id), [{ type: 'RegistryEntryRegistered', data }], { expectedRevision: 'no_stream' });
    return { id };
  }

  /** Edits the caller's entry; another organization's entry answers 404, like a missing one. */
  async edit(orgId: string, id: string, changes: Omit<RegistryEntryEdited, 'entry_id'>): Promise<{ id: string }> {
    // Ownership from the entry's own stream: the source of truth, never behind the projection.
    for (const stream of [certificateStream(id), registryStream(id)]) {
      const [first] = await this.store.readStream(stream, { limit: 1 });
      if (!first) continue;
      // A stream opens with CertificateIssued, CertificateImported or RegistryEntryRegistered: each names its org.
      const owner = (first.data as CertificateIssued | RegistryEntryRegistered).org_id;
      if (owner !== orgId) break;
      await this.store.append(stream, [{ type: 'RegistryEntryEdited', data: { entry_id: id, ...changes } }]);
      return { id };
    }
    throw new AppError('not_found', `registry entry ${id} not found`, 404);
  }

  private view(r: Row) {
    return {
      id: r.id,
      slug: r.slug,
      title: r.title,
      summary: r.summary,
      artifactType: r.artifact_type,
      status: r.status,
      certificateId: r.certificate_id,
      artifactHash: r.artifact_hash,
      rowsCount: r.rows_count,
      industry: r.industry,
      tags: r.tags,
      visibility: r.visibility,
      verificationUrl: r.certificate_id ? `${this.baseUrl}/verify/${r.certificate_id}` : null,
    };
  }
}
