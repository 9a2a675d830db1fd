/** In-process caching and read coalescing: plain TS, no I/O of its own. */

/** A bounded least-recently-used map (a Map keeps insertion order: re-insert on use). */
export class LruCache<V> {
  private readonly map = new Map<string, V>();

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError('capacity must be a positive integer');
  }

  get size(): number {
    return this.map.size;
  }

  get(key: string): V | undefined {
    const value = this.map.get(key);
    if (value !== undefined) {
      this.map.delete(key);
      this.map.set(key, value);
    }
    return value;
  }

  set(key: string, value: V): void {
    this.map.delete(key);
    this.map.set(key, value);
    if (this.map.size > this.capacity) this.map.delete(this.map.keys().next().value!);
  }
}

/** Freezes a value in depth, so a cached one cannot be changed by whoever it is handed to. */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

/**
 * Coalesces the lookups made during one turn of the event loop into one call of `loadMany`
 * (each distinct key once), as DataLoader does. Every lookup still reads after it was asked
 * for, so it sees what a query of its own would have seen; under load, one round trip serves
 * many requests.
 */
export class BatchLoader<V> {
  private pending: Map<string, { resolve: (v: V | undefined) => void; reject: (e: unknown) => void }[]> | null = null;

  constructor(
    private readonly loadMany: (keys: string[]) => Promise<Map<string, V>>,
    private readonly maxBatch = 500,
  ) {}

  load(key: string): Promise<V | undefined> {
    return new Promise((resolve, reject) => {
      if (!this.pending) {
        this.pending = new Map();
        setImmediate(() => this.flush());
      }
      const waiting = this.pending.get(key);
      if (waiting) waiting.push({ resolve, reject });
      else this.pending.set(key, [{ resolve, reject }]);
      if (this.pending.size >= this.maxBatch) this.flush();
    });
  }

  private flush(): void {
    const batch = this.pending;
    this.pending = null;
    if (!batch || batch.size === 0) return;
    this.loadMany([...batch.keys()]).then(
      (found) => {
        for (const [key, waiters] of batch) for (const w of waiters) w.resolve(found.get(key));
      },
      (err: unknown) => {
        for (const waiters of batch.values()) for (const w of waiters) w.reject(err);
      },
    );
  }
}
