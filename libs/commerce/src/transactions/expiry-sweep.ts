/** What one pass runs: expire at most `limit` due authorizations, answering how many it did. */
export type ExpireDue = (limit: number) => Promise<number>;

export interface SweepLogger {
  warn(obj: object, msg: string): void;
}

/**
 * Rejects escalated authorizations whose window has closed, on a timer, in every worker
 * process. Several sweepers may run at once: each rejection is appended at the transaction's
 * expected revision, so a reviewer and a sweeper (or two sweepers) produce exactly one outcome.
 */
export class ExpirySweep {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;

  constructor(
    private readonly expireDue: ExpireDue,
    private readonly intervalMs: number,
    private readonly logger: SweepLogger,
    private readonly extra: Array<() => Promise<unknown>> = [],
    /** What the log calls it (the same loop runs the anchoring sweep). */
    private readonly name = 'expiry sweep',
  ) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.tick(), this.intervalMs);
    this.timer.unref();
  }

  /** One pass; exposed so tests and the CLI can run a sweep on demand. */
  async tick(): Promise<number> {
    if (this.running) return 0;
    let expired = 0;
    this.running = (async () => {
      try {
        let batch: number;
        do {
          batch = await this.expireDue(100);
          expired += batch;
        } while (batch === 100);
        for (const job of this.extra) await job();
      } catch (err) {
        this.logger.warn({ err: (err as Error).message }, `${this.name} failed; retrying next tick`);
      }
    })();
    await this.running;
    this.running = null;
    return expired;
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }
}
