import type { SqlDatabase } from '@app/event-store';
import type { RegistryQuery } from './registry.service';

/** One registry entry as listed, with the page's exact total and the registry version it was read at. */
export interface RegistryRow {
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
  total: string | number | null;
  version: string | number | null;
}

const COLUMNS = 'id, slug, title, summary, artifact_type, status, certificate_id, artifact_hash, rows_count, industry, tags, visibility, created_at';
/** How many filtered entries a text search walks in page order before leaving the plan to the planner. */
const WALK_LIMIT = 2000;

/** Reads of the registry read model (written only by the registry projection). */
export class RegistryReadModel {
  constructor(private readonly db: SqlDatabase) {}

  async version(): Promise<string | null> {
    const [row] = await this.db.query<{ version: string | number }>('SELECT version FROM registry_state', [], { name: 'registry_version' });
    return row ? String(row.version) : null;
  }

  /**
   * One page (limit + 1 rows, newest first; one row of nulls when empty), each row with the
   * exact total (when `count`) and the registry version, all in one statement (one snapshot).
   * `walk`: with a text query, walk the newest filtered entries in index order testing the text
   * on each and stop at a full page; the planner cannot know how often the text matches within
   * the filters, and a misjudged bitmap plan reads every match to sort them.
   */
  page(query: RegistryQuery, orgId: string | undefined, cursor: { at: string; id: string } | undefined, how: { walk: boolean; count: boolean }): Promise<RegistryRow[]> {
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
    if (cursor) {
      params.push(cursor.at, cursor.id);
      filters.push(`(created_at, id) < ($${params.length - 1}::timestamptz, $${params.length})`);
    }
    params.push(query.limit + 1);
    const limit = `$${params.length}`;
    // A listing counted empty looks for no page (the planner makes this a one-time filter).
    const gate = 't.total IS DISTINCT FROM 0';
    const page =
      text && how.walk
        ? `SELECT ${COLUMNS} FROM (SELECT ${COLUMNS}, search FROM registry_entries WHERE ${filters.join(' AND ')}
             ORDER BY created_at DESC, id DESC LIMIT ${WALK_LIMIT}) w WHERE ${text} AND ${gate} ORDER BY created_at DESC, id DESC LIMIT ${limit}`
        : `SELECT ${COLUMNS} FROM registry_entries WHERE ${[...filters, ...(text ? [text] : []), gate].join(' AND ')} ORDER BY created_at DESC, id DESC LIMIT ${limit}`;
    return this.db.query<RegistryRow>(
      `SELECT t.total, (SELECT version FROM registry_state) AS version, p.*
       FROM (SELECT ${how.count ? `count(*) AS total FROM registry_entries WHERE ${counted}` : 'NULL::bigint AS total'}) t
       LEFT JOIN LATERAL (${page}) p ON true
       ORDER BY p.created_at DESC, p.id DESC`,
      params,
    );
  }
}
