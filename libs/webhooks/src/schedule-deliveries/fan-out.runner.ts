import type { EventStore, RecordedEvent } from '@app/event-store';
import type { Logger } from '@app/http';
import { TRANSACTION_STREAM_PREFIX, WEBHOOK_EVENT_TYPES } from '../domain/event-types';
import type { FanOutCheckpoint } from './fan-out-checkpoint.repository';

/**
 * Reads commerce lifecycle events from `$all` in order and has them scheduled
 * (ScheduleDeliveries), a page at a time: the page is scheduled first, then the checkpoint moves
 * past it. A process that dies between the two schedules the page again after its restart, which
 * the appends' derived event ids make a replay: every event fans out exactly once. Several
 * processes may run it (the checkpoint moves by compare-and-set; a page scheduled twice is a replay).
 */
export class FanOutRunner {
  private running: Promise<void> | null = null;
  private stopping = false;
  private wake: (() => void) | null = null;
  private readonly filter = { eventTypes: [...WEBHOOK_EVENT_TYPES], streamPrefix: TRANSACTION_STREAM_PREFIX };

  constructor(
    private readonly store: EventStore,
    private readonly checkpoint: FanOutCheckpoint,
    private readonly schedule: (events: RecordedEvent[]) => Promise<unknown>,
    private readonly logger?: Logger,
    private readonly options: { batchSize?: number; idleMs?: number } = {},
  ) {}

  /** Schedules at most one page; answers how many events it read. */
  async runBatch(): Promise<number> {
    const from = await this.checkpoint.read();
    const page = await this.store.readAll({ fromPosition: from, limit: this.options.batchSize ?? 500, filter: this.filter });
    if (page.nextPosition === from) return 0;
    if (page.events.length > 0) await this.schedule(page.events);
    await this.checkpoint.advance(from, page.nextPosition);
    return page.events.length;
  }

  start(): void {
    if (this.running) return;
    this.stopping = false;
    this.running = (async () => {
      while (!this.stopping) {
        let read = 0;
        try {
          read = await this.runBatch();
        } catch (err) {
          this.logger?.error({ err }, 'webhook fan-out: a batch failed; it is retried');
        }
        // New events (appended here, or notified by another process) wake it at once; it also looks every `idleMs`.
        if (read === 0 && !this.stopping) await this.store.waitForEvents(this.options.idleMs ?? 250, (wake) => (this.wake = wake));
      }
    })();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.wake?.();
    await this.running;
    this.running = null;
  }
}
