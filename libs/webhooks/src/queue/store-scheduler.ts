import type { Logger } from '@app/http';
import type { DeliveryRows } from '../delivery/delivery-rows.repository';
import { DeliveryHandler, DeliveryQueue, DueDelivery } from './delivery-queue.port';

/**
 * The queue without Redis: due deliveries are read from the store (next_attempt_at) and run in
 * this process, up to `concurrency` at once. Claims carry a lease, so schedulers of several
 * processes on one PostgreSQL share the work without attempting one delivery twice at once.
 */
export class StoreScheduler extends DeliveryQueue {
  private handler: DeliveryHandler | null = null;
  private loop: Promise<void> | null = null;
  private stopping = false;
  private wake: (() => void) | null = null;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly deliveries: Pick<DeliveryRows, 'claimDue' | 'nextDueAt'>,
    private readonly concurrency: number,
    private readonly leaseMs: number,
    private readonly logger?: Logger,
    private readonly idleMs = 1000,
  ) {
    super();
  }

  async enqueue(items: DueDelivery[]): Promise<void> {
    if (items.length) this.wake?.();
  }

  async reconcile(): Promise<number> {
    this.wake?.();
    return 0; // the store is this queue: nothing can be lost from it
  }

  async start(handler: DeliveryHandler): Promise<void> {
    this.handler = handler;
    this.stopping = false;
    this.loop ??= this.run();
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      let claimed: DueDelivery[] = [];
      const free = this.concurrency - this.inFlight.size;
      try {
        if (free > 0) claimed = await this.deliveries.claimDue(free, this.leaseMs, new Date());
      } catch (err) {
        this.logger?.error({ err }, 'webhook scheduler: claiming due deliveries failed');
      }
      for (const d of claimed) {
        const job: Promise<void> = this.handler!(d.id, d.series)
          .then(() => undefined)
          .catch((err) => this.logger?.error({ err, delivery_id: d.id }, 'webhook delivery attempt failed'))
          .finally(() => {
            this.inFlight.delete(job);
            this.wake?.();
          });
        this.inFlight.add(job);
      }
      if (claimed.length > 0 && claimed.length === free) continue;
      // All slots busy: a finishing attempt wakes the loop.
      await this.sleep(free <= 0 ? this.idleMs : await this.untilNextDue());
    }
    await Promise.all(this.inFlight);
  }

  private async untilNextDue(): Promise<number> {
    try {
      const next = await this.deliveries.nextDueAt();
      return next ? Math.max(5, Math.min(this.idleMs, next.getTime() - Date.now())) : this.idleMs;
    } catch {
      return this.idleMs;
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    });
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.wake?.();
    await this.loop;
    this.loop = null;
  }
}
