/** What a queue needs to run a delivery: its id, its attempt series, and when it is due. */
export interface DueDelivery {
  id: string;
  series: number;
  at: Date;
}

/** What a queue does with a delivery after one run: nothing more, or run it again at `at`. */
export type RunResult = { next: 'none' } | { next: 'later'; at: Date };

export type DeliveryHandler = (deliveryId: string, series: number) => Promise<RunResult>;

/**
 * Schedules delivery attempts. The store is the truth about what is due; a queue only decides
 * who runs it and when. Adapters: BullMQ on Redis (`REDIS_URL`), or the store scheduler.
 */
export abstract class DeliveryQueue {
  /** Hands deliveries to the queue; a delivery already queued is not queued twice. */
  abstract enqueue(items: DueDelivery[]): Promise<void>;
  /** Starts running deliveries in this process (the worker role). */
  abstract start(handler: DeliveryHandler): Promise<void>;
  /** Re-enqueues what the store says is unfinished (a queue that lost jobs loses nothing). */
  abstract reconcile(): Promise<number>;
  /** Finishes the attempts in flight, then stops. */
  abstract stop(): Promise<void>;
}
