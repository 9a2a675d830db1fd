import type { EndpointChanges } from './endpoint-changes.repository';

/** What an attempt needs of its endpoint: where to send, whether it may, and the secrets that sign. */
export interface SendTarget {
  id: string;
  org_id: string;
  url: string;
  enabled: boolean;
  deleted: boolean;
  /** Secrets not yet expired when loaded, newest first; `expiresAt` (epoch ms) for those rotated out. */
  secrets: { secret: string; expiresAt: number | null }[];
}

/** The secrets that sign at `at`, newest first. */
export const secretsAt = (target: SendTarget, at: Date): string[] =>
  target.secrets.filter((s) => s.expiresAt === null || s.expiresAt > at.getTime()).map((s) => s.secret);

/**
 * Endpoints as the delivery workers see them, kept in memory so an attempt costs no query for
 * its endpoint and no decryption of its secrets. Correct across processes: every endpoint
 * change (update, disable, delete, rotation) is announced on ENDPOINTS_CHANGED_CHANNEL after it
 * commits, and each process drops its whole cache when told, so a change reaches every worker
 * within a NOTIFY's delay. Should a notification be lost (the listening connection dropped, a
 * process died between its commit and the NOTIFY), an entry still lives at most `ttlMs` (5 s),
 * which bounds the staleness: the same window as an attempt already in flight when the change
 * commits, which at-least-once delivery tolerates anyway.
 */
export class EndpointCache {
  private entries = new Map<string, { loadedAt: number; target: Promise<SendTarget | null> }>();
  private unlisten: (() => Promise<void>) | null = null;

  constructor(
    private readonly changes: Pick<EndpointChanges, 'listen'>,
    private readonly load: (id: string) => Promise<SendTarget | null>,
    private readonly ttlMs = 5_000,
    private readonly now: () => number = Date.now,
  ) {}

  async start(): Promise<void> {
    this.unlisten ??= await this.changes.listen(() => this.clear());
  }

  async stop(): Promise<void> {
    await this.unlisten?.();
    this.unlisten = null;
    this.clear();
  }

  get(id: string): Promise<SendTarget | null> {
    const entry = this.entries.get(id);
    if (entry && this.now() - entry.loadedAt < this.ttlMs) return entry.target;
    const target = this.load(id);
    const fresh = { loadedAt: this.now(), target };
    this.entries.set(id, fresh);
    // A failed load is not kept: the next attempt asks the database again.
    target.catch(() => {
      if (this.entries.get(id) === fresh) this.entries.delete(id);
    });
    return target;
  }

  /** Forgets everything: the next attempts read their endpoints again. */
  clear(): void {
    this.entries.clear();
  }
}
