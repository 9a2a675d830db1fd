import { appendManyMigrations } from './append-many.migrations';
import { appendMigrations } from './append.migrations';
import { eventTypeNameMigrations } from './event-type-names.migrations';
import { rowGuardMigrations } from './row-guard.migrations';
import { SqlDatabase } from './sql-database';

/**
 * Schema migrations, applied in order once per database. Other libs register their own
 * (read models) through `runMigrations`. An advisory lock keeps concurrent starters in line.
 */
export interface Migration {
  /** Unique, sortable: `<lib>_<nnn>_<what>`. */
  id: string;
  sql: string;
}

/** The event store's own tables and functions, in order. */
export const eventStoreMigrations: Migration[] = [...appendMigrations, ...appendManyMigrations, ...eventTypeNameMigrations, ...rowGuardMigrations];

export async function runMigrations(db: SqlDatabase, migrations: Migration[]): Promise<string[]> {
  return db.transaction(async (tx) => {
    // Serializes concurrent starters (several api/worker processes on one database).
    await tx.query('SELECT pg_advisory_xact_lock(7355608)');
    await tx.query('CREATE TABLE IF NOT EXISTS schema_migrations (id text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())');
    const done = new Set((await tx.query<{ id: string }>('SELECT id FROM schema_migrations')).map((r) => r.id));
    const applied: string[] = [];
    for (const m of [...migrations].sort((a, b) => a.id.localeCompare(b.id))) {
      if (done.has(m.id)) continue;
      for (const statement of splitStatements(m.sql)) await tx.query(statement);
      await tx.query('INSERT INTO schema_migrations (id) VALUES ($1)', [m.id]);
      applied.push(m.id);
    }
    return applied;
  });
}

/**
 * Splits a migration into statements at top-level semicolons; a dollar-quoted body
 * ($fn$ … $fn$) is kept whole. Comment lines are dropped.
 */
function splitStatements(sql: string): string[] {
  const statements: string[] = [];
  let current = '';
  let inBody = false;
  for (const line of sql.split('\n')) {
    if (!inBody && /^\s*--/.test(line)) continue;
    current += line + '\n';
    if ((line.match(/\$fn\$/g) ?? []).length % 2 === 1) inBody = !inBody;
    if (!inBody && line.trimEnd().endsWith(';')) {
      statements.push(current.trim().replace(/;$/, ''));
      current = '';
    }
  }
  if (current.trim()) statements.push(current.trim().replace(/;$/, ''));
  return statements;
}
