import type { AllFilter, RecordedEvent } from '../event-store.port';

/**
 * Read models as data. An inline projection says, for one event, which read-model rows change
 * (`apply(event) → RowChange[]`); it never runs a query. The store applies the changes: a SQL
 * adapter in the append's own statement (so the event and its rows commit together, one round
 * trip), a subscription-based adapter (KurrentDB) from a checkpointed subscription, and a rebuild
 * from `$all` the same way. One definition serves every path.
 *
 * A value is plain JSON (the column's own type parses it: numbers, ISO timestamps, objects for
 * json columns), or a fact of the event only the store knows before commit (`eventFact`).
 */
export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

export type EventFactName = 'revision' | 'global_position' | 'hash';

/** The event's stream revision, global position or hash, filled in by the store as it appends. */
export interface EventFact {
  readonly $event: EventFactName;
}

/** Adds to the column's current value (a counter); on a new row, the amount is the value. */
export interface Increment {
  readonly $inc: number;
}

export type ColumnValue = Json | EventFact;
export type Row = Record<string, ColumnValue>;

export type RowChange =
  /** A new row. `onConflict` on `key`: keep the existing row, or update the listed columns (an Increment adds). */
  | { op: 'insert'; table: string; key: string[]; row: Record<string, ColumnValue | Increment>; onConflict?: 'nothing' | { update: string[] } }
  /** Changes columns of the row with this key; no such row changes nothing. */
  | { op: 'update'; table: string; key: Row; set: Record<string, ColumnValue | Increment> }
  | { op: 'delete'; table: string; key: Row };

export const eventFact = (name: EventFactName): EventFact => ({ $event: name });
export const increment = (by: number): Increment => ({ $inc: by });
export const isEventFact = (v: unknown): v is EventFact => typeof v === 'object' && v !== null && !Array.isArray(v) && '$event' in v;
export const isIncrement = (v: unknown): v is Increment => typeof v === 'object' && v !== null && !Array.isArray(v) && '$inc' in v;

/** What a projection sees: the event as stored (facts the store fills in are not known yet inline). */
export type ProjectedEvent = Pick<RecordedEvent, 'event_id' | 'stream_id' | 'type' | 'data' | 'metadata' | 'recorded_at'>;

export interface InlineProjection {
  /** Unique; names its checkpoint where the store applies it by subscription. */
  readonly name: string;
  /** The events it reads (by type and stream prefix); others never reach `apply`. */
  readonly filter: AllFilter;
  /** The tables it writes: no other projection or code writes them. */
  readonly tables: readonly string[];
  /** Pure: the row changes this event makes. */
  apply(event: ProjectedEvent): RowChange[];
  /**
   * Invariants of its rows that refuse the append when broken (a counter within its allowance).
   * A SQL database enforces each as the table's CHECK constraint of the same name (its migration
   * creates it); an adapter without one evaluates `holds` on the changed rows.
   */
  readonly checks?: readonly RowCheck[];
  /**
   * Rows of other read models that an event's append needs in a state (a certificate's signing
   * key not revoked). Checked as the event is appended, never again (not by a rebuild, not by a
   * subscription's catch-up).
   */
  readonly guards?: readonly RowGuard[];
}

export interface RowCheck {
  readonly name: string;
  readonly table: string;
  holds(row: Readonly<Record<string, Json>>): boolean;
}

/**
 * A row an appended event needs in a state, read at commit: the append is refused whole
 * (ReadModelConstraintViolated, `name`) when the row's latest committed version holds one of
 * `refusedWhen.values`. A SQL store reads the rows every event of the append names at once
 * (each row once), in the append's own statement, and keeps them locked (FOR SHARE) until it
 * commits, so a change of such a row either commits first and refuses the append, or waits for
 * it. No such row refuses nothing.
 */
export interface RowGuard {
  readonly name: string;
  /** The table read: another projection's read model (only read, never written). */
  readonly table: string;
  /** Its key column (a primary key). */
  readonly column: string;
  /** The key of the row this event needs, or null when it needs none. */
  keyOf(event: ProjectedEvent): string | null;
  /** The column whose value, at commit, refuses the append when it is one of `values`. */
  readonly refusedWhen: { readonly column: string; readonly values: readonly string[] };
  /**
   * An advisory-lock namespace (a 32-bit integer): a SQL store takes the advisory lock (queue,
   * hashtext(key)) shared for each key before it shares the row, so a writer of the row that takes
   * it exclusively first (pg_advisory_xact_lock) waits only for the appends already holding the
   * row; later ones queue behind it. (PostgreSQL lets a new sharer of a row overtake a writer
   * waiting for it, but not a new holder of an advisory lock overtake a waiting exclusive one.)
   * Without one, appends that keep sharing the row without a pause can keep its writer waiting.
   */
  readonly queue?: number;
}

export const projectionAccepts = (p: InlineProjection, e: Pick<ProjectedEvent, 'type' | 'stream_id'>): boolean =>
  (!p.filter.eventTypes?.length || p.filter.eventTypes.includes(e.type)) && (!p.filter.streamPrefix || e.stream_id.startsWith(p.filter.streamPrefix));

/** A read-model table's constraint refused a change (e.g. a counter over its allowance): the whole append is undone. */
export class ReadModelConstraintViolated extends Error {
  readonly code = 'read_model_constraint_violated';
  constructor(
    readonly constraint: string,
    message: string,
  ) {
    super(message);
    this.name = 'ReadModelConstraintViolated';
  }
}
