import { PGlite, Transaction } from '@electric-sql/pglite';
import { closeSync, existsSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { SqlDatabase, SqlExecutor } from '../sql/sql-database';

export class DataDirInUse extends Error {
  constructor(
    readonly dataDir: string,
    readonly pid: number,
  ) {
    super(`the embedded data directory ${dataDir} is in use by process ${pid}; stop it first (PGlite allows one process)`);
    this.name = 'DataDirInUse';
  }
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** One process per data directory: PGlite has no cross-process locking, so two would corrupt it. */
function lockDataDir(dir: string): () => void {
  const file = join(dir, 'sigil.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(file, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => rmSync(file, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const pid = Number(readFileSync(file, 'utf8'));
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && alive(pid)) throw new DataDirInUse(dir, pid);
      rmSync(file, { force: true }); // left by a process that died
    }
  }
  throw new Error(`could not lock ${dir}`);
}

/**
 * A new database starts from PGLITE_TEMPLATE when it is set: a tarball of an initialized data
 * directory (PGlite's `dumpDataDir`). PGlite's own start of a new directory runs initdb inside
 * WebAssembly, about 7 s of CPU on the CI machine; loading the tarball takes about 1.4 s. The test
 * suite makes one in its global setup, so its hundreds of embedded apps do not each run initdb. An
 * existing directory is opened as it is.
 */
function freshTemplate(dataDir: string | undefined): Blob | undefined {
  const template = process.env.PGLITE_TEMPLATE;
  if (!template || (dataDir && existsSync(join(dataDir, 'PG_VERSION')))) return undefined;
  return new Blob([readFileSync(template)]);
}

/**
 * PGlite: PostgreSQL compiled to WASM, in-process, data in a directory (or memory when no
 * directory is given). One session, so statements and transactions are serialized; the same
 * SQL as the postgres adapter runs unchanged.
 */
export class PgliteDatabase extends SqlDatabase {
  readonly kind = 'embedded' as const;
  private readonly listeners = new Map<string, Set<() => void>>();

  private constructor(
    private readonly db: PGlite,
    private readonly unlock: () => void,
  ) {
    super();
  }

  static async open(dataDir?: string): Promise<PgliteDatabase> {
    const unlock = dataDir ? lockDataDir(dataDir) : () => undefined;
    try {
      const template = freshTemplate(dataDir);
      return new PgliteDatabase(await PGlite.create({ ...(dataDir ? { dataDir } : {}), ...(template ? { loadDataDir: template } : {}) }), unlock);
    } catch (err) {
      unlock();
      throw err;
    }
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
    this.unlock();
  }
}
