/** What one pass runs: handle at most `limit` due items, answering how many it did. */
export type SweepDue = (limit: number) => Promise<number>;

export interface SweepLogger {
  warn(obj: object, msg: string): void;
}

/**
 * Work that comes due, done on a timer: each pass calls `due(100)` until a pass handles fewer
 * than 100, then the `extra` jobs; a failure is logged and retried on the next tick. Several
 * sweepers may run at once, so what `due` does must hold under that (an expected revision, or
 * event ids derived from the item, make the second one a no-op).
 */
export class PeriodicSweep {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private queued: Promise<number> | null = null;

  constructor(
    private readonly due: SweepDue,
    private readonly intervalMs: number,
    private readonly logger: SweepLogger,
    private readonly extra: Array<() => Promise<unknown>> = [],
    /** What the log calls it. */
    private readonly name = 'sweep',
  ) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.tick(), this.intervalMs);
    this.timer.unref();
  }

  /**
   * One pass, begun after this call; exposed so tests and the CLI can run a sweep on demand.
   * While a pass runs, what it read as due may predate the call (it began before, or before the
   * last item came due), so the caller gets the next pass, after it; every call made meanwhile,
   * the timer's included, shares that one. (Answering 0 at once, as before, left a caller who had
   * waited for an item to come due with the item not handled.)
   */
  async tick(): Promise<number> {
    if (this.running) {
      this.queued ??= (async () => {
        while (this.running) await this.running;
        this.queued = null;
        return this.tick();
      })();
      return this.queued;
    }
    let handled = 0;
    this.running = (async () => {
      try {
        let batch: number;
        do {
          batch = await this.due(100);
          handled += batch;
        } while (batch === 100);
        for (const job of this.extra) await job();
      } catch (err) {
        this.logger.warn({ err: (err as Error).message }, `${this.name} failed; retrying next tick`);
      }
    })();
    await this.running;
    this.running = null;
    return handled;
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.queued;
    await this.running;
  }
}
