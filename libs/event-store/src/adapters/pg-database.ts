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
  private closed = false;
  /** The LISTEN connection dropped since it last stood: notifications may have been lost. */
  private missed = false;

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

  /**
   * One LISTEN connection per database, shared. Should it drop (a server restart, a terminated
   * backend, a network cut), it is opened again with a growing pause, every channel is listened
   * to again, and every listener is called once: notifications sent while it was down are lost,
   * so whatever a listener keeps up to date (the signing keys, endpoint caches, waiting
   * subscriptions) must look again.
   */
  async listen(channel: string, onNotify: () => void): Promise<() => Promise<void>> {
    const client = await (this.listener ?? this.openListener());
    let set = this.listeners.get(channel);
    if (!set) {
      set = new Set();
      this.listeners.set(channel, set);
      await client.query(`LISTEN ${quoteChannel(channel)}`);
    }
    set.add(onNotify);
    return async () => {
      set!.delete(onNotify);
    };
  }

  /** Opens the LISTEN connection and makes it the current one; one that fails to open is not kept, so the next call tries again. */
  private openListener(): Promise<PoolClient> {
    const opened: Promise<PoolClient> = this.pool.connect().then(async (client) => {
      client.on('notification', (msg) => this.listeners.get(msg.channel)?.forEach((cb) => cb()));
      let lost = false;
      const onLost = () => {
        if (lost || this.closed) return; // closing releases it itself
        lost = true;
        this.missed = true;
        client.release(true);
        if (this.listener === opened) {
          this.listener = null;
          this.reopenListener(1);
        }
      };
      client.on('error', onLost);
      client.on('end', onLost);
      try {
        for (const channel of this.listeners.keys()) await client.query(`LISTEN ${quoteChannel(channel)}`);
      } catch (err) {
        lost = true;
        client.release(true);
        throw err;
      }
      if (this.missed) {
        this.missed = false;
        // After the channels are listened to again: anything later is heard, anything earlier is looked up.
        queueMicrotask(() => this.listeners.forEach((set) => set.forEach((cb) => cb())));
      }
      return client;
    });
    this.listener = opened;
    opened.catch(() => {
      if (this.listener === opened) this.listener = null;
    });
    return opened;
  }

  private reopenListener(attempt: number): void {
    const pause = Math.min(5_000, 100 * 2 ** (attempt - 1));
    setTimeout(() => {
      if (this.closed || this.listener) return;
      this.openListener().catch(() => this.reopenListener(attempt + 1));
    }, pause).unref();
  }

  async notify(channel: string): Promise<void> {
    await this.pool.query('SELECT pg_notify($1, NULL)', [channel]);
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.listener) {
      const listener = this.listener;
      this.listener = null;
      (await listener.catch(() => null))?.release(true);
    }
    await this.pool.end();
  }
}

const quoteChannel = (channel: string) => `"${channel.replace(/"/g, '')}"`;
