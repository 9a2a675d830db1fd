/**
 * The labelled child of a metric, found by its label values through nested maps: prom-client's
 * own `labels(…)` hashes its label values into a new string on every call, which a metric
 * observed on every request should not pay. Label values must be few (route templates, codes).
 */
export class ChildCache<K extends string | number, C> {
  private readonly root = new Map<K, unknown>();

  constructor(
    private readonly depth: 1 | 2 | 3,
    private readonly make: (values: K[]) => C,
  ) {}

  get(a: K, b?: K, c?: K): C {
    if (this.depth === 1) return this.leaf(this.root, a, [a]);
    const second = this.level(this.root, a);
    if (this.depth === 2) return this.leaf(second, b!, [a, b!]);
    return this.leaf(this.level(second, b!), c!, [a, b!, c!]);
  }

  private level(map: Map<K, unknown>, key: K): Map<K, unknown> {
    let next = map.get(key) as Map<K, unknown> | undefined;
    if (!next) map.set(key, (next = new Map()));
    return next;
  }

  private leaf(map: Map<K, unknown>, key: K, values: K[]): C {
    let child = map.get(key) as C | undefined;
    if (child === undefined) map.set(key, (child = this.make(values)));
    return child;
  }
}

/**
 * A probe read on scrape, shared by the gauges it feeds: calls within `maxAgeMs` of the last
 * read (and calls while one is in flight) get that read's answer, so one scrape is one query.
 */
export function sharedProbe<T>(read: () => Promise<T>, maxAgeMs = 1000, now: () => number = Date.now): () => Promise<T> {
  let last: { at: number; value: Promise<T> } | null = null;
  return () => {
    const t = now();
    if (last && t - last.at < maxAgeMs) return last.value;
    const value = read();
    last = { at: t, value };
    // A failed read is not kept: the next scrape asks again.
    value.catch(() => {
      if (last?.value === value) last = null;
    });
    return value;
  };
}
