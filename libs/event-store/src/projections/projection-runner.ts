import type { AllFilter, RecordedEvent } from '../event-store.port';
import { applyToStored } from '../sql/inline-projections';
import type { InlineProjection } from './read-model';
import type { SqlDatabase, SqlExecutor } from '../sql/sql-database';
import type { SqlEventStore } from '../sql/sql-event-store';

/** A read model fed from `$all`. `apply` writes through `tx`, the batch's transaction. */
export interface Projection {
  readonly name: string;
  readonly filter?: AllFilter;
  apply(event: RecordedEvent, tx: SqlExecutor): Promise<void>;
  /**
   * Applies a whole batch (in order) instead of one `apply` per event, so a projection can write
   * it in a few statements. Same transaction, same guarantees.
   */
  applyBatch?(events: RecordedEvent[], tx: SqlExecutor): Promise<void>;
  /**
   * Side effects once a batch has committed (e.g. enqueueing work it scheduled). At most once
   * per batch, and not at all if the process dies between commit and hook: a consumer needs its
   * own recovery path. Errors go to `onError`; they never undo the batch.
   */
  afterCommit?(events: RecordedEvent[]): Promise<void>;
}

/**
 * A read model defined as row changes (`InlineProjection`) but applied after the append, by a
 * checkpointed runner: for read models that may lag a moment (the registry) or that would slow
 * the append they come from. `afterCommit` as for any projection.
 */
export function subscribedReadModel(def: InlineProjection, afterCommit?: Projection['afterCommit']): Projection {
  return {
    name: def.name,
    filter: def.filter,
    apply: (event, tx) => applyToStored(def, [event], tx),
    applyBatch: (events, tx) => applyToStored(def, events, tx),
    ...(afterCommit ? { afterCommit } : {}),
  };
}

/**
 * A projection's `apply` threw on this event (a poison event). The runner never skips it: the
 * checkpoint stays just before it, every event before it is applied, and each retry reports it
 * again (to `onError`) until the projection is fixed.
 */
export class ProjectionApplyFailed extends Error {
  constructor(
    readonly projection: string,
    readonly event: Pick<RecordedEvent, 'event_id' | 'stream_id' | 'revision' | 'global_position' | 'type'>,
    override readonly cause: unknown,
  ) {
    super(
      `projection ${projection} stopped at event ${event.event_id} (${event.type}, ${event.stream_id}@${event.revision}, position ${event.global_position}): ${cause instanceof Error ? cause.message : String(cause)}`,
    );
    this.name = 'ProjectionApplyFailed';
  }
}

export interface ProjectionRunnerOptions {
  batchSize?: number;
  idleWaitMs?: number;
  onError?: (err: unknown) => void;
}

/**
 * Applies events to a projection in batches. Each batch's read-model writes and its checkpoint
 * commit in one transaction, so a process killed at any point leaves either the whole batch
 * applied and checkpointed, or none of it: after a restart every event is applied exactly once.
 * Several runners of the same projection may run (one per process): the checkpoint row is
 * locked and compared, so a batch another runner already applied is never applied again.
 */
export class ProjectionRunner {
  private running: Promise<void> | null = null;
  private stopping = false;
  private wake: (() => void) | null = null;
  private readonly batchSize: number;
  private readonly idleWaitMs: number;
  /**
   * After a batch failed: one event per batch up to its last event, so the good events before
   * the failing one commit and the failing one is named.
   */
  private isolateThrough = -1;

  constructor(
    private readonly db: SqlDatabase,
    private readonly store: SqlEventStore,
    private readonly projection: Projection,
    private readonly options: ProjectionRunnerOptions = {},
  ) {
    this.batchSize = options.batchSize ?? 500;
    this.idleWaitMs = options.idleWaitMs ?? 250;
  }

  get name(): string {
    return this.projection.name;
  }

  async checkpoint(): Promise<number> {
    const [row] = await this.db.query<{ position: string | number }>('SELECT position FROM projection_checkpoints WHERE name = $1', [
      this.projection.name,
    ]);
    return row ? Number(row.position) : 0;
  }

  /** Applies at most one batch; returns how many events it applied. */
  async runBatch(): Promise<number> {
    const from = await this.checkpoint();
    const page = await this.store.readAll({ fromPosition: from, limit: from <= this.isolateThrough ? 1 : this.batchSize, filter: this.projection.filter });
    if (page.nextPosition === from) return 0;
    if (page.events.length === 0) {
      // Nothing of ours in the range: move past it with one compare-and-set, no transaction.
      await this.db.query(
        `INSERT INTO projection_checkpoints (name, position) VALUES ($1, $2) ON CONFLICT (name)
         DO UPDATE SET position = EXCLUDED.position, updated_at = now() WHERE projection_checkpoints.position = $3`,
        [this.projection.name, page.nextPosition, from],
        { name: 'projection_checkpoint_skip' },
      );
      return 0;
    }
    let applied: number;
    try {
      applied = await this.applyPage(from, page);
    } catch (err) {
      // Never skip it: find which event fails (one at a time from here) and name it.
      if (page.events.length > 1) this.isolateThrough = page.events[page.events.length - 1].global_position;
      else if (!(err instanceof ProjectionApplyFailed)) throw new ProjectionApplyFailed(this.projection.name, page.events[0], err);
      throw err;
    }
    if (applied > 0 && this.projection.afterCommit) {
      await this.projection.afterCommit(page.events).catch((err) => this.options.onError?.(err));
    }
    return applied;
  }

  private applyPage(from: number, page: { events: RecordedEvent[]; nextPosition: number }): Promise<number> {
    return this.db.transaction(async (tx) => {
      await tx.query('INSERT INTO projection_checkpoints (name, position) VALUES ($1, 0) ON CONFLICT (name) DO NOTHING', [
        this.projection.name,
      ]);
      const [row] = await tx.query<{ position: string | number }>('SELECT position FROM projection_checkpoints WHERE name = $1 FOR UPDATE', [
        this.projection.name,
      ]);
      if (Number(row.position) !== from) return 0; // another runner got there first; re-read next time
      if (this.projection.applyBatch) await this.projection.applyBatch(page.events, tx);
      else for (const event of page.events) await this.projection.apply(event, tx);
      await tx.query('UPDATE projection_checkpoints SET position = $2, updated_at = now() WHERE name = $1', [
        this.projection.name,
        page.nextPosition,
      ]);
      return page.events.length;
    });
  }

  /** Runs batches until stopped, waiting for new events when caught up. */
  start(): void {
    if (this.running) return;
    this.stopping = false;
    this.running = (async () => {
      let failures = 0;
      while (!this.stopping) {
        let applied = 0;
        try {
          applied = await this.runBatch();
          failures = 0;
        } catch (err) {
          failures++;
          this.options.onError?.(err);
        }
        if (failures > 0 && !this.stopping) {
          // A poison event fails on every try: retry it, less and less often (up to 30 s).
          const waitMs = Math.min(this.idleWaitMs * 2 ** (failures - 1), 30_000);
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, waitMs);
            this.wake = () => {
              clearTimeout(timer);
              resolve();
            };
          });
        } else if (applied === 0 && !this.stopping) {
          await this.store.waitForEvents(this.idleWaitMs, (wake) => (this.wake = wake));
        }
      }
    })();
  }

  /** Finishes the batch in flight, then stops. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.wake?.();
    await this.running;
    this.running = null;
  }

  /**
   * Runs batches until the projection has applied everything visible now and everything this
   * process appended. The second matters because `$all` shows an event only once every older
   * transaction on the server has finished, which other clients can delay.
   */
  async catchUp(timeoutMs = 30_000): Promise<void> {
    const target = Math.max(await this.store.headPosition(), this.store.lastAppendedPosition + 1);
    const deadline = Date.now() + timeoutMs;
    while ((await this.checkpoint()) < target) {
      if ((await this.runBatch()) > 0) continue;
      if (Date.now() > deadline) throw new Error(`projection ${this.projection.name} did not catch up within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }
}
