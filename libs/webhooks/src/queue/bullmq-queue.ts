import { DelayedError, Job, Queue, Worker } from 'bullmq';
import { createRedis, Redis, redisOptions } from '@app/core';
import type { Logger } from '@app/http';
import type { DeliveryRows } from '../delivery/delivery-rows.repository';
import { DeliveryHandler, DeliveryQueue, DueDelivery } from './delivery-queue.port';

export const DELIVERY_QUEUE_NAME = 'webhook-delivery';

interface JobData {
  delivery_id: string;
  series: number;
}

/** Job ids are delivery ids (a redelivery's series adds `-s<n>`), so a delivery is queued once. */
export const jobIdFor = (d: Pick<DueDelivery, 'id' | 'series'>) => (d.series === 1 ? d.id : `${d.id}-s${d.series}`);

/**
 * Delivery attempts on BullMQ. One job per delivery (per redelivery series), whose id is the
 * delivery id. Retries are delayed re-runs of the same job: after a retryable failure the
 * processor moves it to `delayed` until the next attempt's time (job.moveToDelayed +
 * DelayedError). We schedule this way rather than with BullMQ's `attempts` + a backoff
 * strategy because the time comes from the store (schedule and Retry-After, recorded with the
 * attempt), so a job re-enqueued after Redis lost its state resumes the same schedule, and
 * BullMQ's own attempts stay free for infrastructure failures (database down: retried with
 * exponential backoff).
 */
export class BullMqDeliveryQueue extends DeliveryQueue {
  private readonly queue: Queue<JobData>;
  private worker: Worker<JobData> | null = null;
  private workerConnection: Redis | null = null;
  private sweeper: NodeJS.Timeout | null = null;

  constructor(
    private readonly redisUrl: string,
    private readonly prefix: string,
    private readonly deliveries: Pick<DeliveryRows, 'pending'>,
    private readonly options: { concurrency: number; timeoutMs: number; sweepIntervalMs?: number },
    private readonly logger?: Logger,
  ) {
    super();
    // The queue owns its connection, so closing it before Redis was ever reached ends cleanly.
    this.queue = new Queue<JobData>(DELIVERY_QUEUE_NAME, {
      connection: redisOptions(redisUrl, { enableAutoPipelining: false }),
      prefix,
      defaultJobOptions: { removeOnComplete: true, removeOnFail: true, attempts: 8, backoff: { type: 'exponential', delay: 1000 } },
    });
    this.queue.on('error', (err) => this.logger?.warn({ err: err.message }, 'webhook queue: redis error'));
  }

  async enqueue(items: DueDelivery[]): Promise<void> {
    const now = Date.now();
    for (let i = 0; i < items.length; i += 500) {
      await this.queue.addBulk(
        items.slice(i, i + 500).map((d) => ({
          name: 'deliver',
          data: { delivery_id: d.id, series: d.series },
          opts: { jobId: jobIdFor(d), delay: Math.max(0, d.at.getTime() - now) },
        })),
      );
    }
  }

  async start(handler: DeliveryHandler): Promise<void> {
    // Workers block on Redis: their connection must retry forever (maxRetriesPerRequest: null).
    this.workerConnection = createRedis(this.redisUrl, { maxRetriesPerRequest: null, enableAutoPipelining: false });
    // A lock outlives the longest attempt (it is renewed at half its time); a killed worker's
    // jobs go back to the queue once it lapses, found by the next stalled-jobs check.
    const lockDuration = Math.max(10_000, this.options.timeoutMs * 2 + 5_000);
    this.worker = new Worker<JobData>(
      DELIVERY_QUEUE_NAME,
      async (job: Job<JobData>, token?: string) => {
        const result = await handler(job.data.delivery_id, job.data.series);
        if (result.next === 'later') {
          await job.moveToDelayed(result.at.getTime(), token);
          throw new DelayedError();
        }
      },
      {
        connection: this.workerConnection,
        prefix: this.prefix,
        concurrency: this.options.concurrency,
        lockDuration,
        stalledInterval: lockDuration,
        maxStalledCount: 100,
      },
    );
    this.worker.on('error', (err) => this.logger?.warn({ err: err.message }, 'webhook worker: redis error'));
    this.worker.on('failed', (job, err) => this.logger?.error({ err, delivery_id: job?.data.delivery_id }, 'webhook delivery job failed'));
    // Re-enqueue what the store says is unfinished, now and then: Redis may have lost it.
    await this.reconcile().catch((err) => this.logger?.error({ err }, 'webhook queue: re-enqueue at start failed'));
    this.sweeper = setInterval(() => {
      this.reconcile(new Date(Date.now() - 30_000)).catch((err) => this.logger?.warn({ err: err.message }, 'webhook queue: sweep failed'));
    }, this.options.sweepIntervalMs ?? 30_000);
    this.sweeper.unref();
  }

  /** Re-enqueues every pending delivery (due before `dueBefore`, when given); queued ones are left alone. */
  async reconcile(dueBefore?: Date): Promise<number> {
    let n = 0;
    for await (const page of this.deliveries.pending(1000, dueBefore)) {
      await this.enqueue(page);
      n += page.length;
    }
    return n;
  }

  async stop(): Promise<void> {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = null;
    const worker = this.worker;
    this.worker = null;
    await worker?.close();
    await this.queue.close();
    // BullMQ's connections emit a failed start-up ('Connection is closed') even after close() has
    // removed their listeners, which would crash the process as an unhandled 'error' when we stop
    // before Redis was ever reached or while BullMQ was still loading its scripts. They are closed
    // and ours to end: keep one quiet listener on each (the fields are BullMQ's own, not in its types).
    for (const owner of [worker, this.queue] as unknown as Record<string, { on?: (e: string, f: () => void) => void } | undefined>[]) {
      for (const name of ['connection', 'blockingConnection']) owner?.[name]?.on?.('error', () => undefined);
    }
    const c = this.workerConnection;
    await c?.quit().catch(() => c.disconnect());
    this.workerConnection = null;
  }

}
