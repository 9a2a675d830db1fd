/**
 * Remembers webhook-ids already handled, so an at-least-once delivery is acted on once.
 * In memory and per process: behind a load balancer, or across restarts, use a shared store
 * instead (e.g. a unique index on webhook_id, or Redis `SET id 1 NX EX <ttl>`).
 */
export interface WebhookDeduplicator {
  /** True if this id was seen within the TTL (a duplicate); otherwise records it and returns false. */
  seen(webhookId: string): boolean;
  /** Forgets an id, e.g. when handling it failed and the sender's retry should be processed. */
  forget(webhookId: string): void;
  readonly size: number;
}

export interface WebhookDeduplicatorOptions {
  /**
   * How long an id is remembered. Default 48 h: the delivery schedule retries for about 28 h,
   * and a redelivery keeps the original webhook-id.
   */
  ttlMs?: number;
  /** At most this many ids are kept; the oldest go first. Default 100,000. */
  maxEntries?: number;
  now?: () => number;
}

export function createWebhookDeduplicator(options: WebhookDeduplicatorOptions = {}): WebhookDeduplicator {
  const ttlMs = options.ttlMs ?? 48 * 60 * 60 * 1000;
  const maxEntries = options.maxEntries ?? 100_000;
  const now = options.now ?? Date.now;
  if (!(ttlMs > 0) || !(maxEntries >= 1)) throw new RangeError('ttlMs and maxEntries must be positive');
  // Insertion order is time order (a duplicate does not refresh its entry), so expiry is from the front.
  const seenAt = new Map<string, number>();
  const sweep = (t: number) => {
    for (const [id, at] of seenAt) {
      if (t - at < ttlMs && seenAt.size <= maxEntries) break;
      seenAt.delete(id);
    }
  };
  return {
    seen(webhookId) {
      const t = now();
      sweep(t);
      if (seenAt.has(webhookId)) return true;
      seenAt.set(webhookId, t);
      sweep(t);
      return false;
    },
    forget(webhookId) {
      seenAt.delete(webhookId);
    },
    get size() {
      return seenAt.size;
    },
  };
}
