/** In-process caching and read coalescing: plain TS, no I/O of its own. */
import { Batcher } from './batcher';

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
 * (each distinct key once), as DataLoader does: the read side of the one batching mechanism
 * (Batcher). Every lookup still reads after it was asked for, so it sees what a query of its own
 * would have seen; under load, one round trip serves many requests.
 */
export class BatchLoader<V> {
  private readonly batcher: Batcher<string, V | undefined>;

  constructor(loadMany: (keys: string[]) => Promise<Map<string, V>>, maxBatch = 500) {
    this.batcher = new Batcher(
      async (keys) => {
        const found = await loadMany([...new Set(keys)]);
        return keys.map((k) => found.get(k));
      },
      { maxBatch, maxInFlight: Number.POSITIVE_INFINITY },
    );
  }

  load(key: string): Promise<V | undefined> {
    return this.batcher.add(key);
  }
}
