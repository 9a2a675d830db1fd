import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { PgDatabase } from './adapters/pg-database';
import { PgliteDatabase } from './adapters/pglite-database';
import type { InlineProjection } from './projections/read-model';
import { eventStoreMigrations, Migration, runMigrations } from './sql/migrations';
import { SqlDatabase } from './sql/sql-database';
import { SqlEventStore, SqlEventStoreOptions } from './sql/sql-event-store';

export interface OpenEventStoreOptions extends SqlEventStoreOptions {
  /** postgres:// URL: the `postgres` adapter. Absent: the `embedded` adapter. */
  databaseUrl?: string;
  /** Embedded data directory; PGlite keeps its files in `<dataDir>/pglite`. Absent: in memory. */
  dataDir?: string;
  schema?: string;
  poolSize?: number;
  /** Read-model migrations of other libs, applied with the event store's. */
  migrations?: Migration[];
  /** Inline read models of other libs, registered before anything is appended. */
  projections?: InlineProjection[];
}

export interface OpenedEventStore {
  db: SqlDatabase;
  store: SqlEventStore;
}

/** Picks the adapter from config in one place, migrates, and returns the database and store. */
export async function openEventStore(options: OpenEventStoreOptions): Promise<OpenedEventStore> {
  let db: SqlDatabase;
  if (options.databaseUrl) {
    db = new PgDatabase({ connectionString: options.databaseUrl, schema: options.schema, max: options.poolSize });
  } else {
    let dir: string | undefined;
    if (options.dataDir) {
      dir = resolve(options.dataDir, 'pglite');
      mkdirSync(dir, { recursive: true });
    }
    db = await PgliteDatabase.open(dir);
  }
  try {
    if (options.schema && options.databaseUrl) await db.exec(`CREATE SCHEMA IF NOT EXISTS ${options.schema}`);
    await runMigrations(db, [...eventStoreMigrations, ...(options.migrations ?? [])]);
  } catch (err) {
    await db.close().catch(() => undefined);
    throw err;
  }
  const store = new SqlEventStore(db, options);
  for (const p of options.projections ?? []) store.registerProjection(p);
  return { db, store };
}
