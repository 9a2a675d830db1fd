import { hash } from 'node:crypto';
import { isIncrement, RowGuard } from '../projections/read-model';
import { BoundValue, ident, isBoundFact, isCounter, MergedChange, UnsupportedRowChange } from '../projections/row-changes';

/**
 * Row changes as SQL. Changes of one shape (table, operation, columns) become one statement over
 * a JSON array of rows, typed by the table itself (`json_populate_record(null::table, …)`), so an
 * append writes all of its read models in a handful of statements whatever the batch size. With
 * `appended` the statements are CTEs of the append's own statement: they join the CTE `appended`
 * (one row per append: ord, status, stream_revision, first_position, hashes), write only for
 * appends that were `appended` (never for replays or wrong revisions) and compute the event facts.
 */
export interface CompiledRowChanges {
  /** SQL statements (without `appended`) or CTE bodies (with it), in no particular order. */
  statements: string[];
  params: unknown[];
  /** Row guards' CTE bodies (with `appended` only; see compileGuard): each yields one row, `ok`. */
  guards?: string[];
}

type Kind = 'v' | 'i' | 'revision' | 'global_position' | 'hash';
const kindOf = (v: BoundValue): Kind => (isBoundFact(v) ? v.fact : isIncrement(v) ? 'i' : 'v');

interface Group {
  sql: (param: string) => string;
  rows: Record<string, unknown>[];
}

function factExpr(kind: Kind, column: string): string {
  const index = `(j->>'__f_${column}')::bigint`;
  if (kind === 'revision') return `(a.stream_revision - (j->>'__n')::bigint + 1 + ${index})`;
  if (kind === 'global_position') return `(a.first_position + ${index})`;
  return `a.hashes[${index}::int + 1]`;
}

/** The row's JSON: plain values as they are, increments as their amount, facts as their event's place. */
function rowJson(values: Record<string, BoundValue>, key: Record<string, unknown>, appended: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = { ...key };
  let ord: number | undefined;
  let count = 0;
  for (const [column, value] of Object.entries(values)) {
    if (isBoundFact(value)) {
      if (!appended) throw new UnsupportedRowChange(`${column}: an event fact outside an append must be resolved first`);
      if (ord !== undefined && ord !== value.ord) throw new UnsupportedRowChange(`${column}: one row's event facts come from one append`);
      ord = value.ord;
      count = value.count;
      out[`__f_${column}`] = value.index;
    } else out[column] = isIncrement(value) ? value.$inc : value;
  }
  if (ord !== undefined) out.__n = count;
  return out;
}

/** The append each row belongs to: the one its facts name, else the one that produced it (`ords`). */
export function compileRowChanges(
  changes: { change: MergedChange; ord: number }[],
  options: { appended: boolean; firstParam: number; /** each statement runs alone, with its rows as $1 */ separate?: boolean },
): CompiledRowChanges {
  const groups = new Map<string, Group>();
  const from = (t: string) =>
    `json_array_elements(PARAM::json) j CROSS JOIN LATERAL json_populate_record(null::${t}, j) r` +
    (options.appended ? ` JOIN appended a ON a.ord = (j->>'__ord')::int AND a.status = 'appended'` : '');
  for (const { change, ord } of changes) {
    const t = change.table;
    let shape: string;
    let build: (param: string) => string;
    let row: Record<string, unknown>;
    if (change.op === 'insert') {
      const columns = Object.keys(change.row).sort();
      const kinds = columns.map((c) => kindOf(change.row[c]));
      const conflict = change.onConflict === 'nothing' ? [] : [...change.onConflict.update].sort();
      shape = `i${isCounter(change) ? 'c' : ''}|${t}|${change.key.join(',')}|${columns.map((c, i) => `${c}:${kinds[i]}`).join(',')}|${change.onConflict === 'nothing' ? '-' : conflict.join(',')}`;
      // A counter's rows from several appends are added up per key (each only if its append was written).
      const counter = isCounter(change);
      const exprs = columns.map((c, i) =>
        counter ? (change.key.includes(c) ? `r.${c}` : `sum(r.${c})`) : kinds[i] === 'v' || kinds[i] === 'i' ? `r.${c}` : factExpr(kinds[i], c),
      );
      const groupBy = counter ? ` GROUP BY ${change.key.map((k) => `r.${k}`).join(', ')}` : '';
      const onConflict =
        change.onConflict === 'nothing'
          ? 'DO NOTHING'
          : `DO UPDATE SET ${conflict.map((c) => (kindOf(change.row[c]) === 'i' ? `${c} = rm.${c} + EXCLUDED.${c}` : `${c} = EXCLUDED.${c}`)).join(', ')}`;
      build = (p) =>
        `INSERT INTO ${t} AS rm (${columns.join(', ')}) SELECT ${exprs.join(', ')} FROM ${from(t).replace('PARAM', p)}${groupBy}
         ORDER BY ${change.key.map((k) => `r.${k}`).join(', ')} ON CONFLICT (${change.key.join(', ')}) ${onConflict}`;
      row = rowJson(change.row, {}, options.appended);
    } else if (change.op === 'update') {
      const keys = Object.keys(change.key).sort();
      const columns = Object.keys(change.set).sort();
      const kinds = columns.map((c) => kindOf(change.set[c]));
      shape = `u|${t}|${keys.join(',')}|${columns.map((c, i) => `${c}:${kinds[i]}`).join(',')}`;
      const sets = columns.map((c, i) => `${c} = ${kinds[i] === 'v' ? `r.${c}` : kinds[i] === 'i' ? `rm.${c} + r.${c}` : factExpr(kinds[i], c)}`);
      build = (p) => `UPDATE ${t} AS rm SET ${sets.join(', ')} FROM ${from(t).replace('PARAM', p)} WHERE ${keys.map((k) => `rm.${k} = r.${k}`).join(' AND ')}`;
      row = rowJson(change.set, change.key, options.appended);
    } else {
      const keys = Object.keys(change.key).sort();
      shape = `d|${t}|${keys.join(',')}`;
      build = (p) => `DELETE FROM ${t} AS rm USING ${from(t).replace('PARAM', p)} WHERE ${keys.map((k) => `rm.${k} = r.${k}`).join(' AND ')}`;
      row = { ...change.key };
    }
    if (options.appended) row.__ord = ord;
    let group = groups.get(shape);
    if (!group) groups.set(shape, (group = { sql: build, rows: [] }));
    group.rows.push(row);
  }
  const statements: string[] = [];
  const params: unknown[] = [];
  for (const group of groups.values()) {
    params.push(JSON.stringify(group.rows));
    statements.push(group.sql(options.separate ? '$1' : `$${options.firstParam + params.length - 1}`));
  }
  return { statements, params };
}

/**
 * A row guard as a CTE of the append's statement, over one JSON parameter `{ name, refused,
 * rows, keys }` (`rows`: the key of each row needed, with its append's `ord`; `keys`: the distinct
 * keys, for a guard with a queue). The rows that appends
 * actually written (`appended`) need are read each once and locked FOR SHARE: under READ
 * COMMITTED the lock waits for a transaction changing the row and then reads the version it
 * committed. One of them holding a refused value raises SQLSTATE 23514 naming the guard
 * (`sigil_refuse_if`), which undoes the whole statement. Its one row, `ok`, is true otherwise.
 */
export function compileGuard(guard: RowGuard, param: string): string {
  const t = ident(guard.table, 'table');
  const k = ident(guard.column, 'column');
  const c = ident(guard.refusedWhen.column, 'column');
  // In the subquery that names the keys, as a subplan run once (over the distinct `keys`) the first
  // time its condition is tested: whatever join the planner picks, every advisory lock is held
  // before any row named reaches the row lock above.
  const queued =
    guard.queue === undefined ? '' : ` WHERE (SELECT count(pg_advisory_xact_lock_shared(${queueOf(guard.queue)}, hashtext(x))) FROM json_array_elements_text(${param}::json->'keys') x) >= 0`;
  return `SELECT sigil_refuse_if(count(x.v) > 0, ${param}::json->>'name') AS ok
    FROM (SELECT rm.${c}::text AS v FROM ${t} rm
          WHERE rm.${k} IN (SELECT r.${k} FROM json_array_elements(${param}::json->'rows') j CROSS JOIN LATERAL json_populate_record(null::${t}, j) r
                            JOIN appended a ON a.ord = (j->>'__ord')::int AND a.status = 'appended'${queued})
          ORDER BY rm.${k} FOR SHARE OF rm) g
    LEFT JOIN json_array_elements_text(${param}::json->'refused') x(v) ON x.v = g.v`;
}

/** An advisory-lock queue (RowGuard.queue, HeldRow.queue), checked to be a 32-bit integer. */
export const queueOf = (queue: number): number => {
  if (!Number.isInteger(queue) || queue < -2147483648 || queue > 2147483647) throw new Error(`a row guard's queue must be a 32-bit integer: ${queue}`);
  return queue;
};

const names = new Map<string, string>();

/**
 * A stable prepared-statement name for a statement text (plans are cached per connection by
 * name). Remembered per text: a hot path asks for the same few statements on every append.
 */
export function statementName(prefix: string, sql: string): string {
  const id = `${prefix}\u0000${sql}`;
  let name = names.get(id);
  if (name === undefined) {
    name = `${prefix}_${hash('sha1', sql, 'hex').slice(0, 20)}`;
    // Statement shapes are few (one per set of row-change shapes); the bound is a guard.
    if (names.size >= 1000) names.clear();
    names.set(id, name);
  }
  return name;
}
