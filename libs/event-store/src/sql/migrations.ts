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

export const eventStoreMigrations: Migration[] = [
  {
    id: 'event_store_001_events',
    sql: `
      CREATE TABLE IF NOT EXISTS streams (
        stream_id  text PRIMARY KEY,
        revision   bigint NOT NULL,
        last_hash  text
      );
      -- global_position = (xid << 16) + n: increasing in commit-visibility order (see sql-event-store.ts).
      CREATE TABLE IF NOT EXISTS events (
        global_position bigint PRIMARY KEY,
        event_id    uuid NOT NULL,
        stream_id   text NOT NULL,
        revision    bigint NOT NULL,
        type        text NOT NULL,
        data        json NOT NULL,
        metadata    json NOT NULL,
        recorded_at timestamptz NOT NULL,
        hash        text NOT NULL,
        prev_hash   text,
        CONSTRAINT events_event_id_key UNIQUE (event_id),
        CONSTRAINT events_stream_revision_key UNIQUE (stream_id, revision)
      );
      CREATE INDEX IF NOT EXISTS events_type_position ON events (type, global_position);
      CREATE TABLE IF NOT EXISTS projection_checkpoints (
        name       text PRIMARY KEY,
        position   bigint NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now()
      );
    `,
  },
];

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

/** Our migrations contain no semicolons inside literals or bodies, so a plain split is enough. */
function splitStatements(sql: string): string[] {
  return sql
    .split(';')
    .map((s) => s.replace(/--[^\n]*/g, '').trim())
    .filter((s) => s.length > 0);
}
