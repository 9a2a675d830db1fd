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
  private running: Promise<number> | null = null;
  private queued: Promise<number> | null = null;

  constructor(
    private readonly due: SweepDue,
    private readonly intervalMs: number,
    private readonly logger: SweepLogger,
    private readonly extra: Array<() => Promise<unknown>> = [],
    /** What the log calls it. */
    private readonly name = 'sweep',
  ) {}

  /** Runs a pass every interval; `now`: one at once too. */
  start(options: { now?: boolean } = {}): void {
    if (this.timer) return;
    // A failed pass is logged in `pass`; the timer's next tick is its retry.
    const pass = () => void this.tick().catch(() => undefined);
    this.timer = setInterval(pass, this.intervalMs);
    this.timer.unref();
    if (options.now) pass();
  }

  /**
   * One pass, begun after this call; exposed so tests and the CLI can run a sweep on demand.
   * While a pass runs, what it read as due may predate the call (it began before, or before the
   * last item came due), so the caller gets the next pass, after it; every call made meanwhile,
   * the timer's included, shares that one. (Answering 0 at once, as before, left a caller who had
   * waited for an item to come due with the item not handled.) A pass that failed rejects with
   * its error, so a caller who asked for one is not told "0 handled" when nothing was looked at.
   */
  async tick(): Promise<number> {
    if (this.running) {
      this.queued ??= (async () => {
        while (this.running) await this.running.catch(() => undefined);
        this.queued = null;
        return this.tick();
      })();
      return this.queued;
    }
    this.running = this.pass();
    try {
      return await this.running;
    } finally {
      this.running = null;
    }
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.queued?.catch(() => undefined);
    await this.running?.catch(() => undefined);
  }

  private async pass(): Promise<number> {
    let handled = 0;
    try {
      let batch: number;
      do {
        batch = await this.due(100);
        handled += batch;
      } while (batch === 100);
      for (const job of this.extra) await job();
      return handled;
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, `${this.name} failed; retrying next tick`);
      throw err;
    }
  }
}
