import type { InlineProjection } from './projections/read-model';
import type { SqlExecutor } from './sql/sql-database';

/**
 * The EventStore port, shaped after EventStoreDB/KurrentDB: streams with revisions, a global
 * `$all` order, optimistic concurrency, idempotent appends by event id, catch-up subscriptions.
 * Every stream is a hash chain (hash, prev_hash) so a timeline can be proven unaltered.
 */
export type ExpectedRevision = 'no_stream' | 'any' | 'stream_exists' | number;

export interface EventMetadata {
  actor?: string;
  correlation_id?: string;
  causation_id?: string;
  idempotency_key?: string;
  [key: string]: unknown;
}

export interface NewEvent<D = unknown> {
  /** uuid; the idempotency key of the append. Generated when absent. */
  event_id?: string;
  type: string;
  data: D;
  metadata?: EventMetadata;
}

export interface RecordedEvent<D = unknown> {
  event_id: string;
  stream_id: string;
  /** 0 for the first event of a stream. */
  revision: number;
  /** Position in `$all`: increasing in commit-visibility order, not dense. */
  global_position: number;
  type: string;
  data: D;
  metadata: EventMetadata;
  recorded_at: string;
  /** `sha256:<hex>` over the canonical event and prev_hash. */
  hash: string;
  /** The hash of the previous event of the stream; null for revision 0. */
  prev_hash: string | null;
  /**
   * The type the event was hashed with, when a later rename of event types changed `type`
   * (see RENAMED_EVENT_TYPES); absent otherwise. The chain check hashes this one.
   */
  hashed_type?: string;
}

export interface AppendResult {
  /** Revision of the stream's last event after the append. */
  nextExpectedRevision: number;
  /** Global position of the last event written (or found, for an idempotent replay). */
  position: number;
  /** True when every event id was already stored: nothing was written. */
  idempotentReplay: boolean;
  events: RecordedEvent[];
}

export interface ReadStreamOptions {
  /** Revision to start from, inclusive; defaults to the start (forwards) or end (backwards). */
  fromRevision?: number;
  direction?: 'forwards' | 'backwards';
  limit?: number;
}

export interface AllFilter {
  eventTypes?: string[];
  streamPrefix?: string;
}

export interface ReadAllOptions {
  /** Inclusive; 0 = from the start. */
  fromPosition?: number;
  limit?: number;
  filter?: AllFilter;
}

export interface ReadAllPage {
  events: RecordedEvent[];
  /** Where the next read continues. Moves past filtered-out events too, so filters never rescan. */
  nextPosition: number;
}

export interface SubscribeOptions {
  /** Inclusive start position, or 'end' for only new events. Default: 0. */
  fromPosition?: number | 'end';
  filter?: AllFilter;
  batchSize?: number;
}

export interface AllSubscription extends AsyncIterable<RecordedEvent> {
  /** Stops the subscription; a pending iteration ends. */
  stop(): Promise<void>;
}

export type ChainVerdict =
  | { valid: true; stream_id: string; events: number; last_hash: string | null }
  | {
      valid: false;
      stream_id: string;
      events: number;
      /** First revision whose link is broken. */
      broken_at_revision: number;
      event_id: string;
      reason: 'hash_mismatch' | 'prev_hash_mismatch' | 'revision_gap';
      expected: string | number | null;
      actual: string | number | null;
    };

/** One append of `appendMany`. */
export interface StreamAppend {
  stream: string;
  events: NewEvent[];
  expected?: ExpectedRevision;
}

/** `allOrNothing`: a wrong expected revision of any append writes none of them (AppendsNotWritten). */
export interface AppendManyOptions {
  allOrNothing?: boolean;
}

/** What became of one append of `appendMany`: a wrong expected revision fails that append alone. */
export type StreamAppendOutcome =
  | { status: 'appended' | 'replay'; result: AppendResult }
  | { status: 'wrong_expected_version'; error: WrongExpectedVersion };

/** A read-model row an append is decided holding (`appendHolding`). */
export interface HeldRow {
  readonly table: string;
  /** Its key column (a primary key). */
  readonly column: string;
  readonly key: string;
  /** The advisory-lock queue the row's guards share it through (RowGuard.queue). */
  readonly queue: number;
}

/** What a decision made holding a row knows (`appendHolding`). */
export interface Holding {
  /** The store's clock once the row is held, rounded up to the millisecond (the precision events are dated in). */
  readonly at: Date;
  /** Whether the row was there to hold. */
  readonly rowHeld: boolean;
  /** The store's transaction, for a table of the caller's own written with the append (a SQL store); null where there is none. */
  readonly within: SqlExecutor | null;
}

export interface HeldDecision<R> {
  /** None: nothing is appended. */
  events: NewEvent[];
  expectedRevision: ExpectedRevision;
  result: R;
}

/**
 * The port. Read models are inline projections registered by name (`registerProjection`): a SQL
 * adapter applies them in the append's own transaction, so a caller reads its own writes; an
 * adapter without one (KurrentDB) applies them from a checkpointed subscription and has an append
 * wait for that checkpoint before it returns. Either way, nothing else writes their tables.
 */
export abstract class EventStore {
  abstract append(stream: string, events: NewEvent[], options?: { expectedRevision?: ExpectedRevision }): Promise<AppendResult>;
  /**
   * Several streams (each at most once) in one atomic write: each append is checked on its own
   * (a wrong expected revision fails that one and the others go on); a read-model constraint
   * refusing any change undoes them all.
   */
  abstract appendMany(appends: StreamAppend[], options?: AppendManyOptions): Promise<StreamAppendOutcome[]>;
  /**
   * Appends to `stream` what `decide` makes while `row` is held against every writer and sharer,
   * as of the store's clock once it is held. The stream's head is taken first, then the row's
   * queue (RowGuard.queue) and the row, the order an append to the stream takes its head and then
   * the rows its projections change. So the decision waits for the appends already sharing the row
   * (their guards), and those that come after it wait for it and see what it wrote (a revocation
   * dated after every record its key signed and that was accepted). `decide` must not use the
   * store's database outside `within`: an embedded database runs one transaction at a time.
   */
  abstract appendHolding<R>(stream: string, row: HeldRow | null, decide: (holding: Holding) => Promise<HeldDecision<R>>): Promise<R>;
  /** Registers a read model; its tables are written by this projection only, on every append. The same projection twice is a no-op. */
  abstract registerProjection(projection: InlineProjection): void;
  /** Empties the projection's tables and applies every stored event it reads again; returns how many. */
  abstract rebuildProjection(name: string): Promise<number>;
  abstract readStream(stream: string, options?: ReadStreamOptions): Promise<RecordedEvent[]>;
  abstract readAll(options?: ReadAllOptions): Promise<ReadAllPage>;
  abstract subscribeToAll(options?: SubscribeOptions): AllSubscription;
  /**
   * Resolves when new events may be there (an append here, another process's, or `timeoutMs`),
   * reading nothing: for checkpointed readers that page `$all` themselves. `register` receives a
   * function that ends the wait early.
   */
  abstract waitForEvents(timeoutMs: number, register?: (wake: () => void) => void): Promise<void>;
  /** Recomputes the stream's hash chain from the stored rows; reports the first broken link. */
  abstract verifyStream(stream: string): Promise<ChainVerdict>;
  /** The position after which nothing is visible yet; where a subscription 'from end' starts. */
  abstract headPosition(): Promise<number>;
  abstract ping(): Promise<void>;
  abstract close(): Promise<void>;
}

/** An all-or-nothing `appendMany` wrote nothing: `outcomes` says which appends found their stream moved. */
export class AppendsNotWritten extends Error {
  readonly code = 'appends_not_written';
  constructor(readonly outcomes: StreamAppendOutcome[]) {
    const wrong = outcomes.filter((o) => o.status === 'wrong_expected_version');
    super(`nothing was written: ${wrong.length} of ${outcomes.length} appends found their stream at another revision`);
    this.name = 'AppendsNotWritten';
  }
}

export class WrongExpectedVersion extends Error {
  readonly code = 'wrong_expected_version';
  constructor(
    readonly stream: string,
    readonly expected: ExpectedRevision,
    readonly actual: number | 'no_stream',
  ) {
    super(`stream ${stream}: expected revision ${expected}, actual ${actual}`);
    this.name = 'WrongExpectedVersion';
  }
}

/**
 * Load → decide → save again while a concurrent writer wins the race (WrongExpectedVersion), at
 * most `times` attempts (the last loss is thrown); any other error ends it at once. The one loop
 * every optimistic write uses.
 */
export async function retryOnConflict<T>(attempt: () => Promise<T>, times = 5): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await attempt();
    } catch (err) {
      if (!(err instanceof WrongExpectedVersion) || i >= times) throw err;
    }
  }
}

/** An event id reused for different content or in another stream. */
export class EventIdConflict extends Error {
  readonly code = 'event_id_conflict';
  constructor(
    readonly eventIds: string[],
    message: string,
  ) {
    super(message);
    this.name = 'EventIdConflict';
  }
}

export class InvalidAppend extends Error {
  readonly code = 'invalid_event';
  constructor(message: string) {
    super(message);
    this.name = 'InvalidAppend';
  }
}
