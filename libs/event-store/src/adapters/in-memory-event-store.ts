import { randomUUID } from 'node:crypto';
import { canonicalJson } from '@app/crypto';
import {
  AllSubscription,
  AppendManyOptions,
  AppendResult,
  AppendsNotWritten,
  ChainVerdict,
  EventIdConflict,
  EventStore,
  ExpectedRevision,
  HeldDecision,
  HeldRow,
  Holding,
  InvalidAppend,
  NewEvent,
  ReadAllOptions,
  ReadAllPage,
  ReadStreamOptions,
  RecordedEvent,
  StreamAppend,
  StreamAppendOutcome,
  SubscribeOptions,
  WrongExpectedVersion,
} from '../event-store.port';
import { eventHash, verifyChain } from '../hash-chain';
import { InlineProjection, isEventFact, isIncrement, Json, projectionAccepts, ReadModelConstraintViolated, RowChange } from '../projections/read-model';

type Table = Map<string, Record<string, Json>>;

/**
 * The port in process memory: for unit specs of command handlers (no database), and the model a
 * new adapter can be read against. Same rules as the SQL adapters: expected revisions, idempotent
 * event ids, hash chains, `$all` order, and registered projections applied with each append to
 * in-memory tables (their checks refuse the append). Not durable; one process only.
 */
export class InMemoryEventStore extends EventStore {
  private readonly streams = new Map<string, RecordedEvent[]>();
  private readonly all: RecordedEvent[] = [];
  private readonly byId = new Map<string, RecordedEvent>();
  private readonly projections: InlineProjection[] = [];
  private readonly tables = new Map<string, Table>();
  private waiters: (() => void)[] = [];

  constructor(private readonly now: () => Date = () => new Date()) {
    super();
  }

  /** One append at a time here: nothing can share the row while `decide` runs, and the time is this store's clock. */
  async appendHolding<R>(stream: string, row: HeldRow | null, decide: (holding: Holding) => Promise<HeldDecision<R>>): Promise<R> {
    const rowHeld = row !== null && this.tables.get(row.table)?.get(rowId({ [row.column]: row.key })) !== undefined;
    const decided = await decide({ at: this.now(), rowHeld, within: null });
    if (decided.events.length > 0) await this.append(stream, decided.events, { expectedRevision: decided.expectedRevision });
    return decided.result;
  }

  /** A projection's table as rows (specs read their read models here). */
  rows(table: string): Record<string, Json>[] {
    return [...(this.tables.get(table)?.values() ?? [])];
  }

  registerProjection(projection: InlineProjection): void {
    if (this.projections.includes(projection)) return;
    if (this.projections.some((p) => p.name === projection.name)) throw new Error(`projection ${projection.name} is registered already`);
    for (const t of projection.tables) {
      const other = this.projections.find((p) => p.tables.includes(t));
      if (other) throw new Error(`table ${t} is written by projection ${other.name}; ${projection.name} may not write it too`);
      this.tables.set(t, new Map());
    }
    this.projections.push(projection);
  }

  async append(stream: string, events: NewEvent[], options: { expectedRevision?: ExpectedRevision } = {}): Promise<AppendResult> {
    const [outcome] = await this.appendMany([{ stream, events, expected: options.expectedRevision }]);
    if (outcome.status === 'wrong_expected_version') throw outcome.error;
    return outcome.result;
  }

  async appendMany(appends: StreamAppend[], options: AppendManyOptions = {}): Promise<StreamAppendOutcome[]> {
    const staged = new Map([...this.tables].map(([name, t]) => [name, new Map([...t].map(([k, r]) => [k, { ...r }]))]));
    const written: RecordedEvent[] = [];
    const outcomes: StreamAppendOutcome[] = [];
    const heads = new Map<string, RecordedEvent[]>();
    for (const a of appends) {
      const outcome = this.stage(a, heads, written, staged);
      outcomes.push(outcome);
    }
    if (options.allOrNothing && outcomes.some((o) => o.status === 'wrong_expected_version')) throw new AppendsNotWritten(outcomes);
    this.guard(written);
    for (const p of this.projections) for (const check of p.checks ?? []) {
      for (const row of staged.get(check.table)?.values() ?? []) {
        if (!check.holds(row)) throw new ReadModelConstraintViolated(check.name, `read-model constraint ${check.name} refused the change`);
      }
    }
    for (const [stream, events] of heads) this.streams.set(stream, events);
    for (const e of written) {
      this.all.push(e);
      this.byId.set(e.event_id, e);
    }
    for (const [name, t] of staged) this.tables.set(name, t);
    if (written.length > 0) this.wake();
    return outcomes;
  }

  /** The row guards of the events written, on the rows as committed before this append. */
  private guard(written: RecordedEvent[]): void {
    for (const e of written) {
      for (const p of this.projections) {
        if (!projectionAccepts(p, e)) continue;
        for (const g of p.guards ?? []) {
          const key = g.keyOf(e);
          const row = key === null ? undefined : this.tables.get(g.table)?.get(rowId({ [g.column]: key }));
          if (row && g.refusedWhen.values.includes(String(row[g.refusedWhen.column]))) {
            throw new ReadModelConstraintViolated(g.name, `read-model guard ${g.name} refused the change`);
          }
        }
      }
    }
  }

  private stage(a: StreamAppend, heads: Map<string, RecordedEvent[]>, written: RecordedEvent[], staged: Map<string, Table>): StreamAppendOutcome {
    if (typeof a.stream !== 'string' || a.stream.length === 0 || a.stream.startsWith('$')) throw new InvalidAppend('stream id must be 1..256 characters and not start with $');
    if (!Array.isArray(a.events) || a.events.length === 0) throw new InvalidAppend('append needs at least one event');
    const current = heads.get(a.stream) ?? this.streams.get(a.stream) ?? [];
    const withIds = a.events.map((e) => ({ ...e, event_id: e.event_id ?? randomUUID(), metadata: e.metadata ?? {} }));
    const stored = withIds.map((e) => this.byId.get(e.event_id));
    if (stored.every((s) => s !== undefined)) {
      const same = withIds.every((e, i) => stored[i]!.stream_id === a.stream && stored[i]!.type === e.type && canonicalJson(stored[i]!.data) === canonicalJson(e.data));
      if (!same) throw new EventIdConflict(withIds.map((e) => e.event_id), 'event ids already used by other events');
      const last = stored[stored.length - 1]!;
      return { status: 'replay', result: { nextExpectedRevision: current.length - 1, position: last.global_position, idempotentReplay: true, events: stored as RecordedEvent[] } };
    }
    if (stored.some((s) => s !== undefined)) throw new EventIdConflict(withIds.map((e) => e.event_id), 'a partial replay');
    const revision = current.length - 1;
    const expected = a.expected ?? 'any';
    const ok = expected === 'any' || (expected === 'no_stream' && revision === -1) || (expected === 'stream_exists' && revision >= 0) || expected === revision;
    if (!ok) return { status: 'wrong_expected_version', error: new WrongExpectedVersion(a.stream, expected, revision < 0 ? 'no_stream' : revision) };
    const recordedAt = this.now().toISOString();
    let prev = current[current.length - 1]?.hash ?? null;
    const events = withIds.map((e, i) => {
      const data = JSON.parse(canonicalJson(e.data));
      const metadata = JSON.parse(canonicalJson(e.metadata));
      const base = { event_id: e.event_id, stream_id: a.stream, revision: revision + 1 + i, type: e.type, data, metadata, recorded_at: recordedAt, prev_hash: prev };
      const recorded: RecordedEvent = { ...base, global_position: this.all.length + written.length + i, hash: eventHash(base) };
      prev = recorded.hash;
      return recorded;
    });
    for (const e of events) for (const p of this.projections) if (projectionAccepts(p, e)) for (const c of p.apply(e)) applyChange(staged, c, e, p);
    heads.set(a.stream, [...current, ...events]);
    written.push(...events);
    const last = events[events.length - 1];
    return { status: 'appended', result: { nextExpectedRevision: last.revision, position: last.global_position, idempotentReplay: false, events } };
  }

  async rebuildProjection(name: string): Promise<number> {
    const p = this.projections.find((x) => x.name === name);
    if (!p) throw new InvalidAppend(`no projection ${name}`);
    const staged = new Map(p.tables.map((t) => [t, new Map() as Table]));
    const events = this.all.filter((e) => projectionAccepts(p, e));
    for (const e of events) for (const c of p.apply(e)) applyChange(staged, c, e, p);
    for (const [t, rows] of staged) this.tables.set(t, rows);
    return events.length;
  }

  async readStream(stream: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    const events = this.streams.get(stream) ?? [];
    const backwards = options.direction === 'backwards';
    const from = options.fromRevision ?? (backwards ? Number.MAX_SAFE_INTEGER : 0);
    const picked = backwards ? events.filter((e) => e.revision <= from).reverse() : events.filter((e) => e.revision >= from);
    return picked.slice(0, options.limit ?? 100_000);
  }

  async readAll(options: ReadAllOptions = {}): Promise<ReadAllPage> {
    const from = Math.max(0, options.fromPosition ?? 0);
    const limit = options.limit ?? 1000;
    const f = options.filter;
    const range = this.all.slice(from);
    const events: RecordedEvent[] = [];
    let next = this.all.length;
    for (const e of range) {
      if (events.length === limit) {
        next = e.global_position;
        break;
      }
      if ((!f?.eventTypes?.length || f.eventTypes.includes(e.type)) && (!f?.streamPrefix || e.stream_id.startsWith(f.streamPrefix))) events.push(e);
    }
    return { events, nextPosition: Math.max(from, next) };
  }

  subscribeToAll(options: SubscribeOptions = {}): AllSubscription {
    const state = { stopped: false };
    const iterator = this.follow(options, state);
    return { [Symbol.asyncIterator]: () => iterator, stop: async () => ((state.stopped = true), this.wake()) };
  }

  private async *follow(options: SubscribeOptions, state: { stopped: boolean }): AsyncGenerator<RecordedEvent> {
    let position = options.fromPosition === 'end' ? this.all.length : (options.fromPosition ?? 0);
    while (!state.stopped) {
      const page = await this.readAll({ fromPosition: position, filter: options.filter, limit: options.batchSize ?? 500 });
      for (const e of page.events) if (!state.stopped) yield e;
      position = page.nextPosition;
      // An append between the read and here already woke nobody: look before waiting.
      if (page.events.length === 0 && !state.stopped && this.all.length <= position) await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  async waitForEvents(timeoutMs: number, register?: (wake: () => void) => void): Promise<void> {
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      this.waiters.push(done);
      register?.(done);
    });
  }

  async verifyStream(stream: string): Promise<ChainVerdict> {
    return verifyChain(stream, this.streams.get(stream) ?? []);
  }

  async headPosition(): Promise<number> {
    return this.all.length;
  }

  async ping(): Promise<void> {}

  async close(): Promise<void> {
    this.wake();
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }
}

/** A row's place in its in-memory table: its key columns and values. */
const rowId = (k: Record<string, unknown>) => JSON.stringify(Object.keys(k).sort().map((n) => [n, k[n]]));

/** One row change on in-memory tables, in event order (the SQL adapter's merge gives the same result). */
function applyChange(tables: Map<string, Table>, c: RowChange, e: RecordedEvent, p: InlineProjection): void {
  const table = tables.get(c.table);
  if (!table || !p.tables.includes(c.table)) throw new Error(`projection ${p.name} wrote ${c.table}, which it does not declare`);
  const value = (v: unknown, current: Json | undefined): Json => {
    if (isEventFact(v)) return v.$event === 'revision' ? e.revision : v.$event === 'global_position' ? e.global_position : e.hash;
    if (isIncrement(v)) return Number(current ?? 0) + v.$inc;
    return v as Json;
  };
  if (c.op === 'insert') {
    const id = rowId(Object.fromEntries(c.key.map((k) => [k, c.row[k]])));
    const existing = table.get(id);
    if (!existing) table.set(id, Object.fromEntries(Object.entries(c.row).map(([k, v]) => [k, value(v, undefined)])));
    else if (c.onConflict && c.onConflict !== 'nothing') for (const col of c.onConflict.update) existing[col] = value(c.row[col], existing[col]);
    return;
  }
  const id = rowId(c.key);
  if (c.op === 'delete') return void table.delete(id);
  const row = table.get(id);
  if (row) for (const [col, v] of Object.entries(c.set)) row[col] = value(v, row[col]);
}
