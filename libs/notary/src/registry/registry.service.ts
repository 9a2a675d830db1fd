import { BatchLoader, deepFreeze, LruCache } from '@app/core';
import { decodePageCursor, encodePageCursor } from '@app/http';
import type { ArtifactType } from '../domain/artifact-types';
import { RegistryReadModel, RegistryRow } from './registry-read-model.repository';

export interface RegistryQuery {
  status?: 'certified' | 'unverified';
  artifact_type?: ArtifactType;
  industry?: string;
  q?: string;
  visibility: 'public' | 'private';
  limit: number;
  cursor?: string;
}

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

/** A computed page, the registry version it was read at, and its JSON bytes once serialized. */
interface Listing {
  version: string;
  page: RegistryPage;
  json?: Buffer;
}

/** The registry's listings: computed by the read model, kept per process while the registry's version holds. */
export class RegistryService {
  private readonly pages = new LruCache<Listing>(REGISTRY_PAGE_CACHE_SIZE);
  private readonly totals = new LruCache<{ version: string; total: number }>(4 * REGISTRY_PAGE_CACHE_SIZE);
  private readonly version = new BatchLoader<string>(async () => {
    const version = await this.readModel.version();
    return new Map(version !== null ? [['registry', version]] : []);
  });

  constructor(
    private readonly readModel: RegistryReadModel,
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

  /** The same page as UTF-8 JSON bytes, serialized and encoded once per version (a page of 50 is about 30 KB). */
  async listJson(query: RegistryQuery, orgId?: string): Promise<Buffer> {
    const listing = await this.listing(query, orgId);
    return (listing.json ??= Buffer.from(JSON.stringify(listing.page), 'utf8'));
  }

  private async listing(query: RegistryQuery, orgId?: string): Promise<Listing> {
    const filter = JSON.stringify([query.visibility, query.visibility === 'private' ? orgId : null, query.status, query.artifact_type, query.industry, query.q]);
    const key = JSON.stringify([filter, query.limit, query.cursor]);
    const cached = this.pages.get(key);
    // The total does not depend on the page: the next pages of a listing reuse it.
    const known = this.totals.get(filter);
    // A listing never asked before skips the version check: its statement reads the version.
    const version = cached || known ? await this.version.load('registry') : undefined;
    if (cached && version !== undefined && cached.version === version) return cached;
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
    const cursor = query.cursor ? decodePageCursor(query.cursor) : undefined;
    const run = (walk: boolean, count: boolean) => this.readModel.page(query, orgId, cursor, { walk, count });
    const found = (r: RegistryRow[]) => r.filter((x) => x.id !== null).length;
    const attempt = async (count: boolean): Promise<RegistryRow[]> => {
      const walked = await run(true, count);
      const walkedFound = found(walked);
      if (!query.q || walkedFound > query.limit) return walked;
      // Nothing matches at all, or a short first page holds every match counted in its own
      // snapshot: the page is complete.
      const total = walked[0].total;
      if (count && (Number(total) === 0 || (!cursor && walkedFound >= Number(total)))) return walked;
      // Otherwise the walk may have ended first: ask the planner's way. The total counted with
      // the walk holds while the registry's version has not moved.
      const planned = await run(false, false);
      if (!count) return planned;
      if (String(planned[0].version) !== String(walked[0].version)) return run(false, true);
      return [{ ...planned[0], total }, ...planned.slice(1)];
    };
    let rows = await attempt(!known);
    let total = known?.total ?? Number(rows[0].total);
    // The registry moved since that total was counted: count again, in the page's snapshot.
    if (known && String(rows[0].version) !== known.version) {
      rows = await attempt(true);
      total = Number(rows[0].total);
    }
    const listed = rows.filter((r) => r.id !== null);
    const items = listed.slice(0, query.limit);
    const last = items[items.length - 1];
    return {
      page: deepFreeze({
        items: items.map((r) => this.view(r)),
        total,
        next_cursor: listed.length > query.limit ? encodePageCursor(last.created_at, last.id) : null,
      }),
      version: rows[0].version === null ? null : String(rows[0].version),
    };
  }

  private view(r: RegistryRow): RegistryItem {
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
