export interface QueryOptions {
  /** Prepare once per connection under this name and reuse the plan (hot paths). */
  name?: string;
}

/** Runs parameterized SQL; both a database and an open transaction are executors. */
export interface SqlExecutor {
  query<T = Record<string, unknown>>(sql: string, params?: unknown[], options?: QueryOptions): Promise<T[]>;
}

/**
 * The relational database beside the events: PostgreSQL through `pg`, or PGlite embedded.
 * Read models use it too, so a projection can write its table and checkpoint in one transaction.
 */
export abstract class SqlDatabase implements SqlExecutor {
  abstract readonly kind: 'postgres' | 'embedded';
  abstract query<T = Record<string, unknown>>(sql: string, params?: unknown[], options?: QueryOptions): Promise<T[]>;
  /** Runs several statements without parameters (migrations). */
  abstract exec(sql: string): Promise<void>;
  /** Commits when `fn` resolves, rolls back when it throws. */
  abstract transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T>;
  /** Cross-process wake-ups (LISTEN/NOTIFY); in-process only for the embedded database. */
  abstract listen(channel: string, onNotify: () => void): Promise<() => Promise<void>>;
  abstract notify(channel: string): Promise<void>;
  abstract close(): Promise<void>;
  /** The connection pool now (metrics); null where there is none (the embedded database). */
  poolStats(): { total: number; idle: number; waiting: number } | null {
    return null;
  }
}

/** SQLSTATE of a driver error (pg and PGlite both expose `code`). */
export const sqlState = (err: unknown): string | undefined =>
  typeof err === 'object' && err !== null && 'code' in err ? String((err as { code: unknown }).code) : undefined;

export const sqlConstraint = (err: unknown): string | undefined =>
  typeof err === 'object' && err !== null && 'constraint' in err ? String((err as { constraint: unknown }).constraint) : undefined;
