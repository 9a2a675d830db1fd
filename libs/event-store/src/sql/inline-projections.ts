import { InlineProjection, ProjectedEvent, projectionAccepts, ReadModelConstraintViolated, RowGuard } from '../projections/read-model';
import { mergeRowChanges, resolveFacts } from '../projections/row-changes';
import { InvalidAppend, ReadAllPage, RecordedEvent } from '../event-store.port';
import { compileGuard, compileRowChanges, CompiledRowChanges } from './read-model-sql';
import { SqlExecutor, sqlConstraint, sqlState } from './sql-database';

/** The events of one append, as projections see them before the store writes them. */
export interface PendingAppend {
  stream: string;
  events: { event_id: string; type: string; data: unknown; metadata: Record<string, unknown> }[];
  recordedAt: string;
}

/**
 * The projections registered with a SQL store, applied in the append's own statement. Each
 * table belongs to one projection: a second claim is refused at registration.
 */
export class InlineProjections {
  private readonly list: InlineProjection[] = [];
  private readonly owner = new Map<string, string>();

  register(projection: InlineProjection): void {
    // The very same projection again is a no-op: a repository may make sure of its own.
    if (this.list.includes(projection)) return;
    if (this.list.some((p) => p.name === projection.name)) throw new Error(`projection ${projection.name} is registered already`);
    for (const table of projection.tables) {
      const other = this.owner.get(table);
      if (other) throw new Error(`table ${table} is written by projection ${other}; ${projection.name} may not write it too`);
    }
    for (const table of projection.tables) this.owner.set(table, projection.name);
    this.list.push(projection);
  }

  get(name: string): InlineProjection | undefined {
    return this.list.find((p) => p.name === name);
  }

  get size(): number {
    return this.list.length;
  }

  /**
   * The CTEs that write every registered read model for these appends (`ord` = 1-based place),
   * and those of the row guards their events need (one per guard, each row named once per append).
   */
  forAppends(appends: PendingAppend[], firstParam: number): CompiledRowChanges | null {
    if (this.list.length === 0) return null;
    const collected: Parameters<typeof mergeRowChanges>[0] = [];
    const guarded = new Map<RowGuard, Map<string, Record<string, unknown>>>();
    appends.forEach((a, i) => {
      a.events.forEach((e, index) => {
        const event: ProjectedEvent = { event_id: e.event_id, stream_id: a.stream, type: e.type, data: e.data, metadata: e.metadata, recorded_at: a.recordedAt };
        for (const p of this.list) {
          if (!projectionAccepts(p, event)) continue;
          for (const change of p.apply(event)) {
            this.checkOwner(p, change.table);
            collected.push({ change, at: { ord: i + 1, index, count: a.events.length } });
          }
          for (const guard of p.guards ?? []) {
            const key = guard.keyOf(event);
            if (key === null) continue;
            let rows = guarded.get(guard);
            if (!rows) guarded.set(guard, (rows = new Map()));
            rows.set(`${i + 1}\u0000${key}`, { [guard.column]: key, __ord: i + 1 });
          }
        }
      });
    });
    if (collected.length === 0 && guarded.size === 0) return null;
    const compiled: CompiledRowChanges = collected.length > 0 ? compileRowChanges(mergeRowChanges(collected), { appended: true, firstParam }) : { statements: [], params: [] };
    compiled.guards = [];
    for (const [guard, rows] of guarded) {
      const named = [...rows.values()];
      // Sorted: appends naming several keys queue on them in one order.
      const keys = guard.queue === undefined ? undefined : [...new Set(named.map((r) => String(r[guard.column])))].sort();
      compiled.params.push(JSON.stringify({ name: guard.name, refused: guard.refusedWhen.values, rows: named, keys }));
      compiled.guards.push(compileGuard(guard, `$${firstParam + compiled.params.length - 1}`));
    }
    return compiled;
  }

  /**
   * Empties a projection's tables and applies it to every event `readPage` gives (from position 0,
   * pages of 1,000), in the caller's transaction. The tables are locked first: appends writing them
   * wait until the rebuild commits (an UPDATE beside it lost its change), and those before have
   * committed, so `readPage` may read past the horizon (which any long transaction in the cluster
   * holds back; a rebuild bounded by it dropped everything recorded since).
   *
   * An append locks the tables it writes in the order of its changes (and a referenced table last,
   * for its foreign key), so one may hold a table the rebuild needs next while it waits for one the
   * rebuild holds. The first table is waited for as long as it takes (holding nothing, the rebuild
   * is in no cycle); the later ones for a quarter of `deadlock_timeout` in all, after which the
   * rebuild gives way (lock_not_available, 55P03, for the caller to run it again) before the
   * deadlock check of an append waiting with it fails the append. Only an append that had already
   * waited more than three quarters of `deadlock_timeout` when the rebuild took its first table
   * can still lose the deadlock to it.
   */
  async rebuild(name: string, tx: SqlExecutor, readPage: (from: number, filter: InlineProjection['filter']) => Promise<ReadAllPage>): Promise<number> {
    const p = this.get(name);
    if (!p) throw new InvalidAppend(`no projection ${name}`);
    const [first, ...later] = p.tables;
    await tx.query(`LOCK TABLE ${first} IN EXCLUSIVE MODE`);
    if (later.length > 0) {
      await tx.query(`SELECT set_config('lock_timeout', greatest(1, setting::int / $1)::text, true) FROM pg_settings WHERE name = 'deadlock_timeout'`, [4 * later.length]);
      await tx.query(`LOCK TABLE ${later.join(', ')} IN EXCLUSIVE MODE`);
      await tx.query('SET LOCAL lock_timeout = DEFAULT');
    }
    // Children first: a table declared after another may reference it.
    for (const table of [...p.tables].reverse()) await tx.query(`DELETE FROM ${table}`);
    let applied = 0;
    for (let position = 0, size = 1000; size === 1000; ) {
      const page = await readPage(position, p.filter);
      await applyToStored(p, page.events, tx);
      applied += size = page.events.length;
      position = page.nextPosition;
    }
    return applied;
  }

  private checkOwner(p: InlineProjection, table: string): void {
    if (this.owner.get(table) !== p.name) throw new Error(`projection ${p.name} wrote ${table}, which it does not declare`);
  }
}

/**
 * Applies a projection to stored events in the caller's transaction: the same row changes as
 * inline, with the event facts read from the events. Rebuilds use it, and so do read models fed
 * by a checkpointed subscription (`readModelRunner`).
 */
export async function applyToStored(p: InlineProjection, events: RecordedEvent[], tx: SqlExecutor): Promise<void> {
  const collected: Parameters<typeof mergeRowChanges>[0] = [];
  events.forEach((event, i) => {
    if (!projectionAccepts(p, event)) return;
    for (const change of p.apply(event)) {
      if (!p.tables.includes(change.table)) throw new Error(`projection ${p.name} wrote ${change.table}, which it does not declare`);
      collected.push({ change, at: { ord: i + 1, index: 0, count: 1 } });
    }
  });
  if (collected.length === 0) return;
  const resolved = mergeRowChanges(collected, { stored: true }).map(({ change: c }) =>
    resolveFacts(c, (f) => {
      const e = events[f.ord - 1];
      return f.fact === 'revision' ? e.revision : f.fact === 'global_position' ? e.global_position : e.hash;
    }),
  );
  // A statement's foreign keys are checked as it ends: rows written parents first (the order the
  // projection declares its tables in), rows deleted last and children first.
  const place = (c: { op: string; table: string }) => (c.op === 'delete' ? 2 * p.tables.length - p.tables.indexOf(c.table) : p.tables.indexOf(c.table));
  resolved.sort((a, b) => place(a) - place(b));
  const compiled = compileRowChanges(resolved.map((change) => ({ change, ord: 0 })), { appended: false, firstParam: 1, separate: true });
  for (let i = 0; i < compiled.statements.length; i++) await tx.query(compiled.statements[i], [compiled.params[i]]).catch(constraintViolation);
}

/** A read model's CHECK constraint refused a change: the append (and everything in its statement) is undone. */
export function constraintViolation(err: unknown): never {
  if (sqlState(err) === '23514') {
    const name = sqlConstraint(err) ?? 'unknown';
    throw new ReadModelConstraintViolated(name, `read-model constraint ${name} refused the change`);
  }
  throw err;
}
