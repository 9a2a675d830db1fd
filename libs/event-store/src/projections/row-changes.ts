import { ColumnValue, EventFactName, Increment, isEventFact, isIncrement, Json, Row, RowChange } from './read-model';

/**
 * A fact bound to the event that asked for it: which append of the statement (`ord`, 1-based),
 * which event of that append (`index`) and how many events the append has (`count`).
 */
export interface BoundFact {
  readonly fact: EventFactName;
  readonly ord: number;
  readonly index: number;
  readonly count: number;
}

export type BoundValue = Json | Increment | BoundFact;

/** A row change whose event facts are bound to their events; at most one per table and key. */
export type MergedChange =
  | { op: 'insert'; table: string; key: string[]; row: Record<string, BoundValue>; onConflict: 'nothing' | { update: string[] } }
  | { op: 'update'; table: string; key: Record<string, Json>; set: Record<string, BoundValue> }
  | { op: 'delete'; table: string; key: Record<string, Json> };

export const isBoundFact = (v: unknown): v is BoundFact => typeof v === 'object' && v !== null && !Array.isArray(v) && 'fact' in v && 'ord' in v;

export class UnsupportedRowChange extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnsupportedRowChange';
  }
}

const IDENT = /^[a-z_][a-z0-9_]*$/;
export const ident = (name: string, what: string): string => {
  if (!IDENT.test(name)) throw new UnsupportedRowChange(`${what} ${JSON.stringify(name)} is not a lowercase SQL identifier`);
  return name;
};

function literalKey(table: string, key: Row): Record<string, Json> {
  const out: Record<string, Json> = {};
  for (const [column, value] of Object.entries(key)) {
    if (isEventFact(value) || isIncrement(value)) throw new UnsupportedRowChange(`${table}.${column}: a key is a plain value`);
    out[ident(column, 'column')] = value;
  }
  return out;
}

const identity = (table: string, key: Record<string, Json>) =>
  `${table}\u0000${JSON.stringify(Object.keys(key).sort().map((k) => [k, key[k]]))}`;

function bind(values: Record<string, ColumnValue | Increment>, at: Omit<BoundFact, 'fact'>): Record<string, BoundValue> {
  const out: Record<string, BoundValue> = {};
  for (const [column, value] of Object.entries(values)) {
    ident(column, 'column');
    out[column] = isEventFact(value) ? { fact: value.$event, ...at } : (value as Json | Increment);
  }
  return out;
}

/** A later value over an earlier one: increments add up; a counter is only ever incremented. */
function combine(table: string, column: string, earlier: BoundValue | undefined, later: BoundValue): BoundValue {
  if (earlier === undefined) return later;
  const inc = (v: BoundValue) => isIncrement(v);
  if (inc(later) || inc(earlier)) {
    if (!(inc(later) && inc(earlier))) throw new UnsupportedRowChange(`${table}.${column}: a counter column is only ever incremented`);
    return { $inc: (earlier as Increment).$inc + (later as Increment).$inc };
  }
  return later;
}

const mergeValues = (table: string, into: Record<string, BoundValue>, from: Record<string, BoundValue>) => {
  const out = { ...into };
  for (const [column, value] of Object.entries(from)) out[column] = combine(table, column, out[column], value);
  return out;
};

const union = (a: string[], b: string[]) => [...new Set([...a, ...b])];

/**
 * Folds the changes of one statement (in event order) into one change per table and key, so no
 * row is touched twice (a statement's parts all see the same snapshot, so an update could not
 * see a row an insert of the same statement made). Pure.
 */
export function mergeRowChanges(
  changes: { change: RowChange; at: Omit<BoundFact, 'fact'> }[],
  /** `stored`: the events are all written already (rebuilds): rows merge across them freely. */
  options: { stored?: boolean } = {},
): { change: MergedChange; ord: number }[] {
  // `ord`: the append whose change made the row first (a row is one stream's, so one append's).
  const byKey = new Map<string, { change: MergedChange; ord: number }>();
  const ordsOfRow = new Map<string, number>();
  const onlyDeleted = new Map<string, boolean>();
  const put = (id: string, next: MergedChange, ord: number) => {
    // A counter row several appends increment stays one change per append: each counts only if
    // its append is written, and the SQL adds them up per row. So does a row several appends
    // only delete (each delete happens if its append is written; deleting twice is deleting).
    // Any other row is one append's.
    const counter = !options.stored && isCounter(next);
    const firstOrd = ordsOfRow.get(id) ?? ord;
    ordsOfRow.set(id, firstOrd);
    const deletesOnly = (onlyDeleted.get(id) ?? true) && next.op === 'delete';
    onlyDeleted.set(id, deletesOnly);
    const sharedDelete = !options.stored && deletesOnly && firstOrd !== ord;
    if (firstOrd !== ord && !counter && !sharedDelete && !options.stored) throw new UnsupportedRowChange(`${next.table}: one row written by two appends of one statement`);
    const slot = counter || sharedDelete ? `${id}\u0000${ord}` : id;
    const prev = byKey.get(slot);
    byKey.set(slot, { change: merge(prev?.change, next, options.stored === true), ord: prev?.ord ?? ord });
  };
  for (const { change, at } of changes) {
    const table = ident(change.table, 'table');
    let next: MergedChange;
    if (change.op === 'insert') {
      const keyValues: Row = {};
      for (const k of change.key) keyValues[k] = (change.row[k] as ColumnValue) ?? null;
      const onConflict = change.onConflict ?? 'nothing';
      if (onConflict !== 'nothing') onConflict.update.forEach((c) => ident(c, 'column'));
      next = { op: 'insert', table, key: Object.keys(literalKey(table, keyValues)), row: bind(change.row, at), onConflict };
      put(identity(table, literalKey(table, keyValues)), next, at.ord);
    } else {
      const key = literalKey(table, change.key);
      next = change.op === 'update' ? { op: 'update', table, key, set: bind(change.set, at) } : { op: 'delete', table, key };
      put(identity(table, key), next, at.ord);
    }
  }
  return [...byKey.values()];
}

function merge(prev: MergedChange | undefined, next: MergedChange, stored: boolean): MergedChange {
  if (!prev) return next;
  const t = next.table;
  if (next.op === 'delete') return next;
  if (prev.op === 'delete') {
    if (!stored) throw new UnsupportedRowChange(`${t}: a row is not written again after its delete in one append`);
    // Stored events (a rebuild) deleted it, then wrote it again: an update finds no row; an insert makes the row it names.
    if (next.op === 'update') return prev;
    const columns = Object.keys(next.row).filter((c) => !next.key.includes(c));
    if (columns.some((c) => isIncrement(next.row[c]))) throw new UnsupportedRowChange(`${t}: a counter row is not written again after its delete in one append`);
    return { ...next, onConflict: columns.length > 0 ? { update: columns } : 'nothing' };
  }
  if (prev.op === 'insert' && next.op === 'insert') {
    if (next.onConflict === 'nothing') return prev;
    const update = union(prev.onConflict === 'nothing' ? [] : prev.onConflict.update, next.onConflict.update);
    const picked = Object.fromEntries(next.onConflict.update.map((c) => [c, next.row[c]]));
    return { ...prev, row: mergeValues(t, prev.row, picked), onConflict: { update } };
  }
  if (prev.op === 'insert' && next.op === 'update') {
    const update = union(prev.onConflict === 'nothing' ? [] : prev.onConflict.update, Object.keys(next.set));
    return { ...prev, row: mergeValues(t, prev.row, next.set), onConflict: { update } };
  }
  if (prev.op === 'update' && next.op === 'update') return { ...prev, set: mergeValues(t, prev.set, next.set) };
  throw new UnsupportedRowChange(`${t}: an insert after an update of the same row in one append`);
}

/** An upsert whose every non-key column is an increment it adds on conflict: a counter. */
export function isCounter(c: MergedChange): boolean {
  if (c.op !== 'insert' || c.onConflict === 'nothing') return false;
  const columns = Object.keys(c.row).filter((k) => !c.key.includes(k));
  return columns.length > 0 && columns.every((k) => isIncrement(c.row[k])) && columns.every((k) => (c.onConflict as { update: string[] }).update.includes(k));
}

/** Resolves bound facts from the stored events (rebuilds and subscriptions, where everything is known). */
export function resolveFacts(change: MergedChange, factOf: (fact: BoundFact) => Json): MergedChange {
  const resolve = (values: Record<string, BoundValue>) =>
    Object.fromEntries(Object.entries(values).map(([c, v]) => [c, isBoundFact(v) ? factOf(v) : v])) as Record<string, BoundValue>;
  if (change.op === 'insert') return { ...change, row: resolve(change.row) };
  if (change.op === 'update') return { ...change, set: resolve(change.set) };
  return change;
}
