import {
  AllSubscription,
  ChainVerdict,
  EventStore,
  ReadAllOptions,
  ReadAllPage,
  ReadStreamOptions,
  RecordedEvent,
  SubscribeOptions,
} from '../event-store.port';
import { verifyChain } from '../hash-chain';
import { BOUNDARY_SQL, clampLimit, EVENT_COLUMNS, EventRow, NOTIFY_CHANNEL, toRecorded } from './append-sql';
import { SqlDatabase, SqlExecutor } from './sql-database';

export interface SqlEventStoreOptions {
  /** How often live subscriptions poll when no wake-up arrives (other processes, held transactions). */
  pollIntervalMs?: number;
  now?: () => Date;
  /** Told how long each `append` / `appendMany` took (metrics); called whether it succeeded or not. */
  onAppend?: (method: 'append' | 'append_many', seconds: number) => void;
}

/**
 * The reading half of the SQL adapter: streams, `$all` below the visibility horizon, catch-up
 * subscriptions woken by this process's appends and other processes' NOTIFY, chain verification.
 */
export abstract class SqlEventReads extends EventStore {
  private readonly waiters = new Set<() => void>();
  private notifyTimer: NodeJS.Timeout | null = null;
  private unlisten: Promise<() => Promise<void>> | null = null;
  protected closed = false;
  private readonly pollIntervalMs: number;

  constructor(
    readonly db: SqlDatabase,
    options: SqlEventStoreOptions = {},
  ) {
    super();
    this.pollIntervalMs = options.pollIntervalMs ?? 100;
  }

  async readStream(stream: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    const backwards = options.direction === 'backwards';
    const limit = clampLimit(options.limit, 100_000);
    const from = options.fromRevision ?? (backwards ? Number.MAX_SAFE_INTEGER : 0);
    const rows = await this.db.query<EventRow>(
      `SELECT ${EVENT_COLUMNS} FROM events WHERE stream_id = $1 AND revision ${backwards ? '<=' : '>='} $2
       ORDER BY revision ${backwards ? 'DESC' : 'ASC'} LIMIT $3`,
      [stream, from, limit],
    );
    return rows.map(toRecorded);
  }

  async readAll(options: ReadAllOptions = {}): Promise<ReadAllPage> {
    return this.readAllIn(this.db, options);
  }

  /**
   * `$all` from a position. Below the visibility horizon by default (what a subscriber may pass
   * for good); `horizon: false` reads everything the executor's snapshot sees, for a reader that
   * has made sure nothing it needs is still in flight (a rebuild holding its tables' lock). The
   * horizon is the cluster's oldest running transaction, so an unrelated long one holds it back.
   */
  async readAllIn(executor: SqlExecutor, options: ReadAllOptions = {}, { horizon = true } = {}): Promise<ReadAllPage> {
    const from = Math.max(0, options.fromPosition ?? 0);
    const limit = clampLimit(options.limit, 10_000, 1000);
    const params: unknown[] = [from, limit];
    let where = '';
    if (options.filter?.eventTypes?.length) {
      params.push(options.filter.eventTypes);
      where += ` AND e.type = ANY($${params.length}::text[])`;
    }
    if (options.filter?.streamPrefix) {
      params.push(options.filter.streamPrefix.replace(/[\\%_]/g, (c) => `\\${c}`) + '%');
      where += ` AND e.stream_id LIKE $${params.length}`;
    }
    const rows = await executor.query<EventRow & { boundary: string | number }>(
      `SELECT b.boundary, x.* FROM (SELECT ${BOUNDARY_SQL} AS boundary) b
       LEFT JOIN LATERAL (
         SELECT ${EVENT_COLUMNS.split(', ').map((c) => `e.${c}`).join(', ')} FROM events e
         WHERE e.global_position >= $1${horizon ? ' AND e.global_position < b.boundary' : ''}${where}
         ORDER BY e.global_position LIMIT $2
       ) x ON true`,
      params,
    );
    const boundary = Number(rows[0].boundary);
    const events = rows.filter((r) => r.event_id !== null).map(toRecorded);
    const last = events.length > 0 ? events[events.length - 1].global_position + 1 : from;
    const nextPosition = events.length === limit || !horizon ? last : Math.max(from, boundary);
    return { events, nextPosition };
  }

  async headPosition(): Promise<number> {
    const [row] = await this.db.query<{ boundary: string | number }>(`SELECT ${BOUNDARY_SQL} AS boundary`);
    return Number(row.boundary);
  }

  subscribeToAll(options: SubscribeOptions = {}): AllSubscription {
    const state = { stopped: false, wake: null as (() => void) | null };
    const iterator = this.follow(options, state);
    return {
      [Symbol.asyncIterator]: () => iterator,
      stop: async () => {
        state.stopped = true;
        state.wake?.();
      },
    };
  }

  /** Catch-up, then live: read pages from `$all`; when caught up, wait for a wake-up or the poll interval. */
  private async *follow(options: SubscribeOptions, state: { stopped: boolean; wake: (() => void) | null }): AsyncGenerator<RecordedEvent> {
    const batchSize = clampLimit(options.batchSize, 10_000, 500);
    let position = options.fromPosition === 'end' ? await this.headPosition() : (options.fromPosition ?? 0);
    while (!state.stopped && !this.closed) {
      const page = await this.readAll({ fromPosition: position, limit: batchSize, filter: options.filter });
      for (const event of page.events) {
        if (state.stopped) return;
        yield event;
      }
      position = page.nextPosition;
      if (page.events.length < batchSize && !state.stopped) {
        await this.waitForEvents(this.pollIntervalMs, (wake) => (state.wake = wake));
      }
    }
  }

  /**
   * Resolves when this process appends, another process notifies, or the timeout passes.
   * `register` receives a function that ends the wait early (used by stop()).
   */
  async waitForEvents(timeoutMs: number, register?: (wake: () => void) => void): Promise<void> {
    this.ensureListening();
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      this.waiters.add(done);
      register?.(done);
    });
  }

  private ensureListening(): void {
    if (this.unlisten || this.db.kind !== 'postgres' || this.closed) return;
    this.unlisten = this.db.listen(NOTIFY_CHANNEL, () => this.wakeWaiters());
    this.unlisten.catch(() => (this.unlisten = null)); // fall back to polling
  }

  private wakeWaiters(): void {
    for (const wake of [...this.waiters]) wake();
  }

  /** Wake local subscribers now; tell other processes, at most once per 5 ms. */
  protected announce(): void {
    this.wakeWaiters();
    if (this.db.kind !== 'postgres' || this.notifyTimer || this.closed) return;
    this.notifyTimer = setTimeout(() => {
      this.notifyTimer = null;
      if (!this.closed) this.db.notify(NOTIFY_CHANNEL).catch(() => undefined);
    }, 5);
  }

  async verifyStream(stream: string): Promise<ChainVerdict> {
    const events = await this.readStream(stream);
    const verdict = verifyChain(stream, events);
    if (!verdict.valid) return verdict;
    const [head] = await this.db.query<{ revision: string | number; last_hash: string | null }>(
      'SELECT revision, last_hash FROM streams WHERE stream_id = $1',
      [stream],
    );
    const headRevision = head ? Number(head.revision) : -1;
    const lastRevision = events.length - 1;
    if (headRevision !== lastRevision || (head?.last_hash ?? null) !== verdict.last_hash) {
      // Trailing events removed (or the head rewritten): the chain alone cannot see that.
      return {
        valid: false,
        stream_id: stream,
        events: events.length,
        broken_at_revision: Math.min(headRevision, lastRevision) + 1,
        event_id: events[events.length - 1]?.event_id ?? '',
        reason: 'revision_gap',
        expected: head?.last_hash ?? null,
        actual: verdict.last_hash,
      };
    }
    return verdict;
  }

  async ping(): Promise<void> {
    await this.db.query('SELECT 1');
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.notifyTimer) clearTimeout(this.notifyTimer);
    this.wakeWaiters();
    const unlisten = await this.unlisten?.catch(() => null);
    await unlisten?.();
  }
}
