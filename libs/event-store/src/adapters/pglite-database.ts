import { PGlite, Transaction } from '@electric-sql/pglite';
import { SqlDatabase, SqlExecutor } from '../sql/sql-database';

/**
 * PGlite: PostgreSQL compiled to WASM, in-process, data in a directory (or memory when no
 * directory is given). One session, so statements and transactions are serialized; the same
 * SQL as the postgres adapter runs unchanged.
 */
export class PgliteDatabase extends SqlDatabase {
  readonly kind = 'embedded' as const;
  private readonly listeners = new Map<string, Set<() => void>>();

  private constructor(private readonly db: PGlite) {
    super();
  }

  static async open(dataDir?: string): Promise<PgliteDatabase> {
    const db = await PGlite.create(dataDir ? { dataDir } : {});
    return new PgliteDatabase(db);
  }

  async query<T>(sql: string, params?: unknown[]): Promise<T[]> {
    return (await this.db.query<T>(sql, params)).rows;
  }

  async exec(sql: string): Promise<void> {
    await this.db.exec(sql);
  }

  async transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    return this.db.transaction(async (t: Transaction) =>
      fn({ query: async <R>(sql: string, params?: unknown[]) => (await t.query<R>(sql, params)).rows }),
    );
  }

  // One process owns the data directory, so notifications never need to leave it.
  async listen(channel: string, onNotify: () => void): Promise<() => Promise<void>> {
    let set = this.listeners.get(channel);
    if (!set) this.listeners.set(channel, (set = new Set()));
    set.add(onNotify);
    return async () => {
      set!.delete(onNotify);
    };
  }

  async notify(channel: string): Promise<void> {
    this.listeners.get(channel)?.forEach((cb) => cb());
  }

  async close(): Promise<void> {
    if (!this.db.closed) await this.db.close();
  }
}
