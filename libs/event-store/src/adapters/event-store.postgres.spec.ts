import { randomBytes, randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { contractStore, eventStoreContract } from '../contract/event-store.contract';
import type { InlineProjection, RowChange } from '../projections/read-model';
import type { SqlDatabase } from '../sql/sql-database';
import { projectionsContract } from '../contract/projections.contract';
import { allOrderContract } from '../contract/all-order.contract';
import { openEventStore } from '../open-event-store';

/**
 * The postgres adapter runs the same contract when DATABASE_URL is set (`.ci/run` sets it for
 * its second `npm test`). Each run gets its own schema, dropped afterwards.
 */
const url = process.env.DATABASE_URL as string;
if (!url) throw new Error('DATABASE_URL is required for the postgres contract suite');
const harness = () => {
  const schema = `es_test_${randomBytes(6).toString('hex')}`;
  return {
    open: () => openEventStore({ databaseUrl: url, schema, pollIntervalMs: 50 }),
    async dispose() {
      const client = new Client({ connectionString: url });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await client.end();
    },
  };
};

eventStoreContract('postgres', harness);
allOrderContract('postgres', harness);
projectionsContract('postgres', harness);

/** Rebuilding a read model with other transactions running on the same server: what only PostgreSQL has. */
describe('rebuilding a projection on postgres', () => {
  const opened = contractStore(harness, async ({ db, store }) => {
    await db.exec(`
      CREATE TABLE rebuilt_notes (note_id text PRIMARY KEY, body text NOT NULL);
      CREATE FUNCTION rebuilt_notes_slow() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.body = 'slow' THEN PERFORM pg_advisory_xact_lock_shared(${SLOW_NOTE_LOCK}); END IF;
          RETURN NEW;
        END $$;
      CREATE TRIGGER rebuilt_notes_slow BEFORE INSERT ON rebuilt_notes FOR EACH ROW EXECUTE FUNCTION rebuilt_notes_slow();
      CREATE TABLE pair_a (id text PRIMARY KEY);
      CREATE TABLE pair_b (id text PRIMARY KEY REFERENCES pair_a (id));
      CREATE TABLE link_parent (id text PRIMARY KEY);
      CREATE TABLE link_child (id text PRIMARY KEY REFERENCES link_parent (id));
    `);
    store.registerProjection(notesProjection);
    store.registerProjection(pairsProjection);
    store.registerProjection(linksProjection);
  });
  const note = (id: string, body = 'written') => ({ type: 'NoteWritten', data: { note_id: id, body } });
  const notes = async (ids: string[]) => (await opened.db.query<{ note_id: string }>('SELECT note_id FROM rebuilt_notes WHERE note_id = ANY($1) ORDER BY note_id', [ids])).map((r) => r.note_id);

  /** A transaction on its own connection, begun (and given an id) before `during` and ended after it. */
  const whileOpen = async <T>(during: () => Promise<T>): Promise<T> => {
    const other = new Client({ connectionString: url });
    await other.connect();
    try {
      await other.query('BEGIN');
      await other.query('SELECT pg_current_xact_id()');
      return await during();
    } finally {
      await other.query('ROLLBACK');
      await other.end();
    }
  };

  it('keeps every event recorded while an older transaction elsewhere holds the horizon back', async () => {
    const ids = [randomUUID(), randomUUID()].sort();
    const applied = await whileOpen(async () => {
      for (const id of ids) await opened.store.append(`note-${id}`, [note(id)]);
      // `$all` for subscribers stops below the older transaction; the rebuild must not.
      expect((await opened.store.readAll({ filter: { streamPrefix: 'note-' } })).events.map((e) => e.stream_id)).not.toContain(`note-${ids[0]}`);
      return opened.store.rebuildProjection('rebuilt_notes');
    });
    expect(applied).toBeGreaterThanOrEqual(2);
    expect(await notes(ids)).toEqual(ids);
  });

  it('an append that changes a row while a rebuild runs waits for it, and the change is kept', async () => {
    const [edited, slow] = [randomUUID(), randomUUID()];
    await opened.store.append(`note-${edited}`, [note(edited)]);
    await opened.store.append(`note-${slow}`, [note(slow, 'slow')]);
    // The rebuild stops at `slow` (its trigger waits for the advisory lock held here), in the statement that writes both rows again.
    const holder = new Client({ connectionString: url });
    await holder.connect();
    await holder.query('SELECT pg_advisory_lock($1)', [SLOW_NOTE_LOCK]);
    const settled: Promise<unknown>[] = [];
    try {
      const rebuilt = opened.store.rebuildProjection('rebuilt_notes');
      settled.push(rebuilt);
      expect(await waiting(opened.db, `locktype = 'advisory' AND objid = ${SLOW_NOTE_LOCK}`)).toBe(true);
      // A plain UPDATE of the row the rebuild deleted and is writing again: it must wait for the rebuild, not lose its change.
      const edit = opened.store.append(`note-${edited}`, [{ type: 'NoteEdited', data: { note_id: edited, body: 'edited' } }]);
      settled.push(edit);
      expect(await waiting(opened.db, `locktype = 'relation' AND relation = 'rebuilt_notes'::regclass`)).toBe(true);
      await holder.query('SELECT pg_advisory_unlock($1)', [SLOW_NOTE_LOCK]);
      await rebuilt;
      await edit;
    } finally {
      await holder.end();
      await Promise.allSettled(settled);
    }
    expect(await opened.db.query('SELECT note_id, body FROM rebuilt_notes WHERE note_id = ANY($1) ORDER BY body', [[edited, slow]])).toEqual([
      { note_id: edited, body: 'edited' },
      { note_id: slow, body: 'slow' },
    ]);
  });

  it('gives way to an append that holds one of its tables and waits for another, rather than deadlocking with it; a table referencing another is emptied first', async () => {
    const [first, second] = [randomUUID(), randomUUID()];
    const settled: Promise<unknown>[] = [];
    let rebuilt!: Promise<number>;
    let both!: Promise<unknown>;
    try {
      await opened.db.transaction(async (tx) => {
        // An append in flight that holds pair_a: the rebuild queues for it (its first table, waited for as long as it takes).
        await opened.store.appendIn(tx, `pair-${first}`, [{ type: 'AWritten', data: { id: first } }]);
        settled.push((rebuilt = opened.store.rebuildProjection('rebuilt_pairs')));
        expect(await waiting(opened.db, `locktype = 'relation' AND relation = 'pair_a'::regclass`)).toBe(true);
        // This append takes pair_b (its first change), then queues for pair_a behind the rebuild.
        settled.push((both = opened.store.append(`pair-${second}`, [{ type: 'BothWritten', data: { id: second } }])));
        expect(await waiting(opened.db, `locktype = 'relation' AND relation = 'pair_a'::regclass`, 2)).toBe(true);
      });
      // Now the rebuild takes pair_a and asks for pair_b, which the waiting append holds: a cycle.
      await both;
      expect(await rebuilt).toBeGreaterThanOrEqual(2);
    } finally {
      await Promise.allSettled(settled);
    }
    expect((await opened.db.query<{ id: string }>('SELECT id FROM pair_a WHERE id = ANY($1) ORDER BY id', [[first, second]])).map((r) => r.id)).toEqual([first, second].sort());
    expect((await opened.db.query<{ id: string }>('SELECT id FROM pair_b WHERE id = ANY($1)', [[first, second]])).map((r) => r.id)).toEqual([second]);
  });

  it('writes the rows of a referenced table first, whatever order an event gives its changes in', async () => {
    const ids = [randomUUID(), randomUUID()];
    for (const id of ids) await opened.store.append(`link-${id}`, [{ type: 'LinkWritten', data: { id } }]);
    expect(await opened.store.rebuildProjection('rebuilt_links')).toBeGreaterThanOrEqual(2);
    expect((await opened.db.query<{ id: string }>('SELECT id FROM link_child WHERE id = ANY($1) ORDER BY id', [ids])).map((r) => r.id)).toEqual([...ids].sort());
  });
});

/** The advisory lock a note written as 'slow' waits for, in the notes table's trigger. */
const SLOW_NOTE_LOCK = 0x5107e;

/** Notes: written (inserted), edited (a plain UPDATE of the row). */
const notesProjection: InlineProjection = {
  name: 'rebuilt_notes',
  filter: { streamPrefix: 'note-' },
  tables: ['rebuilt_notes'],
  apply: (e) => {
    const d = e.data as { note_id: string; body: string };
    if (e.type === 'NoteEdited') return [{ op: 'update', table: 'rebuilt_notes', key: { note_id: d.note_id }, set: { body: d.body } }];
    return [{ op: 'insert', table: 'rebuilt_notes', key: ['note_id'], row: { note_id: d.note_id, body: d.body } }];
  },
};

/** Pairs: `AWritten` writes pair_a; `BothWritten` writes pair_b, then pair_a (the order an append then locks them in). */
const pairsProjection: InlineProjection = {
  name: 'rebuilt_pairs',
  filter: { streamPrefix: 'pair-' },
  tables: ['pair_a', 'pair_b'],
  apply: (e) => {
    const { id } = e.data as { id: string };
    const a: RowChange = { op: 'insert', table: 'pair_a', key: ['id'], row: { id } };
    return e.type === 'BothWritten' ? [{ op: 'insert', table: 'pair_b', key: ['id'], row: { id } }, a] : [a];
  },
};

/** Links: each event writes the child row before its parent's, as an append may (its foreign key is checked at the statement's end). */
const linksProjection: InlineProjection = {
  name: 'rebuilt_links',
  filter: { streamPrefix: 'link-' },
  tables: ['link_parent', 'link_child'],
  apply: (e) => {
    const { id } = e.data as { id: string };
    return [
      { op: 'insert', table: 'link_child', key: ['id'], row: { id } },
      { op: 'insert', table: 'link_parent', key: ['id'], row: { id } },
    ];
  },
};

/** Whether at least `sessions` sessions wait for a lock matching `where` (polled: a waiter may not have asked yet). */
async function waiting(db: SqlDatabase, where: string, sessions = 1): Promise<boolean> {
  for (let i = 0; i < 100; i++) {
    const [row] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted AND ${where}`);
    if (row.n >= sessions) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return false;
}
