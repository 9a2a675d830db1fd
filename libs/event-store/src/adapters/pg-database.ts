import { Pool, PoolClient } from 'pg';
import { QueryOptions, SqlDatabase, SqlExecutor } from '../sql/sql-database';

export interface PgDatabaseOptions {
  connectionString: string;
  /** Pool size; the default suits a 2-core machine with 64 concurrent callers. */
  max?: number;
  /** search_path for every connection (tests use one schema per suite). */
  schema?: string;
  applicationName?: string;
}

export class PgDatabase extends SqlDatabase {
  readonly kind = 'postgres' as const;
  private readonly pool: Pool;
  private listener: Promise<PoolClient> | null = null;
  private readonly listeners = new Map<string, Set<() => void>>();

  constructor(private readonly options: PgDatabaseOptions) {
    super();
    if (options.schema && !/^[a-z_][a-z0-9_]*$/.test(options.schema)) throw new Error('invalid schema name');
    this.pool = new Pool({
      connectionString: options.connectionString,
      max: options.max ?? 24,
      application_name: options.applicationName ?? 'sigil',
      options: options.schema ? `-c search_path=${options.schema}` : undefined,
    });
    // An idle client that errors (server restart) is dropped by the pool; don't crash the process.
    this.pool.on('error', () => undefined);
  }

  async query<T>(sql: string, params?: unknown[], options?: QueryOptions): Promise<T[]> {
    const res = await this.pool.query({ text: sql, values: params as unknown[], name: options?.name });
    return res.rows as T[];
  }

  override poolStats() {
    return { total: this.pool.totalCount, idle: this.pool.idleCount, waiting: this.pool.waitingCount };
  }

  async exec(sql: string): Promise<void> {
    await this.pool.query(sql);
  }

  async transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    const tx: SqlExecutor = {
      query: async <R>(sql: string, params?: unknown[], options?: QueryOptions) =>
        (await client.query({ text: sql, values: params as unknown[], name: options?.name })).rows as R[],
    };
    try {
      await client.query('BEGIN');
      const result = await fn(tx);
      await client.query('COMMIT');
      client.release();
      return result;
    } catch (err) {
      try {
        await client.query('ROLLBACK');
        client.release();
      } catch (rollbackErr) {
        client.release(rollbackErr as Error); // broken connection: discard it
      }
      throw err;
    }
  }

  async listen(channel: string, onNotify: () => void): Promise<() => Promise<void>> {
    // One LISTEN connection per database, shared; concurrent first callers await the same one.
    this.listener ??= this.pool.connect().then((client) => {
      client.on('notification', (msg) => this.listeners.get(msg.channel)?.forEach((cb) => cb()));
      client.on('error', () => undefined);
      return client;
    });
    const client = await this.listener;
    let set = this.listeners.get(channel);
    if (!set) {
      set = new Set();
      this.listeners.set(channel, set);
      await client.query(`LISTEN "${channel.replace(/"/g, '')}"`);
    }
    set.add(onNotify);
    return async () => {
      set!.delete(onNotify);
    };
  }

  async notify(channel: string): Promise<void> {
    await this.pool.query('SELECT pg_notify($1, NULL)', [channel]);
  }

  async close(): Promise<void> {
    if (this.listener) {
      const listener = this.listener;
      this.listener = null;
      (await listener.catch(() => null))?.release(true);
    }
    await this.pool.end();
  }
}
