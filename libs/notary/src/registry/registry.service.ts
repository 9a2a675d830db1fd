import { randomUUID } from 'node:crypto';
import { AppError, BatchLoader, deepFreeze, LruCache } from '@app/core';
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

const COLUMNS = 'id, slug, title, summary, artifact_type, status, certificate_id, artifact_hash, rows_count, industry, tags, visibility, created_at';
/** How many filtered entries a text search walks in page order before leaving the plan to the planner. */
const WALK_LIMIT = 2000;

/** Listings kept per process (about 25-60 KB each at 50 items). */
export const REGISTRY_PAGE_CACHE_SIZE = 256;

/** A RegistryEntry as the spec names its fields. */
export interface RegistryItem {
  id: string;
  slug: string;
  title: string;
  summary: string | null;
  artifactType: string;
  status: string;
  certificateId: string | null;
  artifactHash: string | null;
  rowsCount: number | null;
  industry: string | null;
  tags: string[];
  visibility: string;
  verificationUrl: string | null;
}

export interface RegistryPage {
  items: RegistryItem[];
  total: number;
  next_cursor: string | null;
}

/** A computed page, the registry version it was read at, and its JSON once serialized. */
interface Listing {
  version: string;
  page: RegistryPage;
  json?: string;
}

export class RegistryService {
  private readonly pages = new LruCache<Listing>(REGISTRY_PAGE_CACHE_SIZE);
  private readonly totals = new LruCache<{ version: string; total: number }>(4 * REGISTRY_PAGE_CACHE_SIZE);
  private readonly version = new BatchLoader<string>(async () => {
    const [row] = await this.db.query<{ version: string | number }>('SELECT version FROM registry_state', [], { name: 'registry_version' });
    return new Map(row ? [['registry', String(row.version)]] : []);
  });

  constructor(
    private readonly db: SqlDatabase,
    private readonly store: SqlEventStore,
    private readonly baseUrl: string,
  ) {}

  /**
   * A page of entries, newest first; `private` lists only the caller's organization. The page,
   * its exact total and the registry's version are read in one statement (one snapshot); the
   * result is kept per process and served again while the version has not moved, which every
   * request checks (the checks of one moment share one query).
   */
  async list(query: RegistryQuery, orgId?: string): Promise<RegistryPage> {
    return (await this.listing(query, orgId)).page;
  }

  /** The same page as JSON text, serialized once per version (a page of 50 is about 30 KB). */
  async listJson(query: RegistryQuery, orgId?: string): Promise<string> {
    const listing = await this.listing(query, orgId);
    return (listing.json ??= JSON.stringify(listing.page));
  }

  private async listing(query: RegistryQuery, orgId?: string): Promise<Listing> {
    const filter = JSON.stringify([query.visibility, query.visibility === 'private' ? orgId : null, query.status, query.artifact_type, query.industry, query.q]);
    const key = JSON.stringify([filter, query.limit, query.cursor]);
    const version = await this.version.load('registry');
    const cached = this.pages.get(key);
    if (cached && version !== undefined && cached.version === version) return cached;
    // The total does not depend on the page: the next pages of a listing reuse it.
    const known = this.totals.get(filter);
    const { page, version: computedAt } = await this.compute(query, orgId, known && known.version === version ? known : undefined);
    const listing: Listing = { version: computedAt ?? '', page };
    if (computedAt !== null) {
      this.pages.set(key, listing);
      this.totals.set(filter, { version: computedAt, total: page.total });
    }
    return listing;
  }

  /** `known`: the total at a version; used (and not counted again) when the statement reads that same version. */
  private async compute(query: RegistryQuery, orgId?: string, known?: { version: string; total: number }): Promise<{ page: RegistryPage; version: string | null }> {
    const params: unknown[] = [query.visibility];
    const filters = ['visibility = $1'];
    const add = (clause: string, value: unknown) => {
      params.push(value);
      filters.push(clause.replace('?', `$${params.length}`));
    };
    if (query.visibility === 'private') add('org_id = ?', orgId);
    if (query.status) add('status = ?', query.status);
    if (query.artifact_type) add('artifact_type = ?', query.artifact_type);
    if (query.industry) add('industry = ?', query.industry);
    let text: string | null = null;
    if (query.q) {
      params.push(query.q);
      text = `search @@ websearch_to_tsquery('simple', $${params.length})`;
    }
    const counted = [...filters, ...(text ? [text] : [])].join(' AND ');
    if (query.cursor) {
      const [at, id] = decodeCursor(query.cursor);
      params.push(at, id);
      filters.push(`(created_at, id) < ($${params.length - 1}::timestamptz, $${params.length})`);
    }
    params.push(query.limit + 1);
    const limit = `$${params.length}`;
    const page = (walk: boolean) =>
      text && walk
        ? // Walk the newest entries that pass the filters, in index order, testing the text query
          // on each, and stop at a full page: the planner cannot know how often the text query
          // matches within the filters, and a misjudged bitmap plan reads every match to sort them.
          `SELECT ${COLUMNS} FROM (SELECT ${COLUMNS}, search FROM registry_entries WHERE ${filters.join(' AND ')}
             ORDER BY created_at DESC, id DESC LIMIT ${WALK_LIMIT}) w WHERE ${text} ORDER BY created_at DESC, id DESC LIMIT ${limit}`
        : `SELECT ${COLUMNS} FROM registry_entries WHERE ${[...filters, ...(text ? [text] : [])].join(' AND ')} ORDER BY created_at DESC, id DESC LIMIT ${limit}`;
    // One row per item (or one row of nulls for an empty page), each with the total and the version.
    const run = (walk: boolean, count: boolean) =>
      this.db.query<Row & { total: string | number | null; version: string | number | null }>(
        `SELECT t.total, (SELECT version FROM registry_state) AS version, p.*
         FROM (SELECT ${count ? `count(*) AS total FROM registry_entries WHERE ${counted}` : 'NULL::bigint AS total'}) t
         LEFT JOIN LATERAL (${page(walk)}) p ON true
         ORDER BY p.created_at DESC, p.id DESC`,
        params,
      );
    const full = (r: Row[]) => r.filter((x) => x.id !== null).length > query.limit;
    const attempt = async (count: boolean) => {
      let r = await run(true, count);
      // A short page from the walk may only mean the walk ended first: ask the planner's way.
      if (text && !full(r)) r = await run(false, count);
      return r;
    };
    let rows = await attempt(!known);
    let total = known?.total ?? Number(rows[0].total);
    // The registry moved since that total was counted: count again, in the page's snapshot.
    if (known && String(rows[0].version) !== known.version) {
      rows = await attempt(true);
      total = Number(rows[0].total);
    }
    const found = rows.filter((r) => r.id !== null);
    const items = found.slice(0, query.limit);
    return {
      page: deepFreeze({
        items: items.map((r) => this.view(r)),
        total,
        next_cursor: found.length > query.limit ? encodeCursor(items[items.length - 1]) : null,
      }),
      version: rows[0].version === null ? null : String(rows[0].version),
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

  private view(r: Row): RegistryItem {
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
