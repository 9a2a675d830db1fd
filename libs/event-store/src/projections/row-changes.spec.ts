import { eventFact, increment, RowChange } from './read-model';
import { mergeRowChanges, UnsupportedRowChange } from './row-changes';

const at = (ord: number, index = 0, count = 1) => ({ ord, index, count });
const insert = (id: string, row: Record<string, unknown> = {}): RowChange => ({ op: 'insert', table: 'orders', key: ['id'], row: { id, ...row } as never });
const counter = (customer: string, by = 1): RowChange => ({ op: 'insert', table: 'counts', key: ['customer'], row: { customer, n: increment(by) }, onConflict: { update: ['n'] } });

describe('mergeRowChanges: one change per row and statement', () => {
  it('folds an insert and later updates of the same row into one insert, facts bound to their events', () => {
    const merged = mergeRowChanges([
      { change: insert('o1', { status: 'open', revision: eventFact('revision') }), at: at(1, 0, 2) },
      { change: { op: 'update', table: 'orders', key: { id: 'o1' }, set: { status: 'paid', revision: eventFact('revision') } }, at: at(1, 1, 2) },
    ]);
    expect(merged).toEqual([
      {
        ord: 1,
        change: { op: 'insert', table: 'orders', key: ['id'], row: { id: 'o1', status: 'paid', revision: { fact: 'revision', ord: 1, index: 1, count: 2 } }, onConflict: { update: ['status', 'revision'] } },
      },
    ]);
  });

  it('keeps different rows apart and a later delete wins', () => {
    const merged = mergeRowChanges([
      { change: insert('o1'), at: at(1) },
      { change: insert('o2'), at: at(2) },
      { change: { op: 'delete', table: 'orders', key: { id: 'o1' } }, at: at(1) },
    ]);
    expect(merged.map((m) => m.change.op)).toEqual(['delete', 'insert']);
  });

  it('adds up increments of one append, and keeps a counter row per append so each counts only if written', () => {
    const one = mergeRowChanges([
      { change: counter('c'), at: at(1) },
      { change: counter('c', 2), at: at(1) },
    ]);
    expect(one).toHaveLength(1);
    expect(one[0].change).toMatchObject({ row: { n: { $inc: 3 } } });
    expect(mergeRowChanges([{ change: counter('c'), at: at(1) }, { change: counter('c'), at: at(2) }])).toHaveLength(2);
    // Rebuilds (every event stored already) fold them into one.
    expect(mergeRowChanges([{ change: counter('c'), at: at(1) }, { change: counter('c'), at: at(2) }], { stored: true })).toHaveLength(1);
  });

  it('keeps the first insert of a row when a later one says "nothing on conflict"', () => {
    const [m] = mergeRowChanges([
      { change: insert('o1', { status: 'open' }), at: at(1) },
      { change: insert('o1', { status: 'other' }), at: at(1) },
    ]);
    expect(m.change).toMatchObject({ row: { status: 'open' } });
  });

  it('keeps a delete per append when several appends of one statement only delete a row (each deletes if written)', () => {
    const del = { op: 'delete', table: 'orders', key: { id: 'o1' } } as const;
    const merged = mergeRowChanges([
      { change: del, at: at(1) },
      { change: del, at: at(2) },
      { change: del, at: at(3) },
    ]);
    expect(merged.map((m) => [m.change.op, m.ord])).toEqual([['delete', 1], ['delete', 2], ['delete', 3]]);
    // A row another append writes otherwise is still one append's.
    expect(() => mergeRowChanges([{ change: del, at: at(1) }, { change: insert('o1'), at: at(2) }])).toThrow(UnsupportedRowChange);
    expect(() => mergeRowChanges([{ change: insert('o1'), at: at(1) }, { change: del, at: at(2) }])).toThrow(UnsupportedRowChange);
  });

  it('in a rebuild, a row deleted and then inserted again is the row inserted (an update after the delete finds none)', () => {
    const del = { op: 'delete', table: 'orders', key: { id: 'o1' } } as const;
    const [m] = mergeRowChanges([{ change: insert('o1', { status: 'open' }), at: at(1) }, { change: del, at: at(2) }, { change: insert('o1', { status: 'again' }), at: at(3) }], { stored: true });
    expect(m.change).toEqual({ op: 'insert', table: 'orders', key: ['id'], row: { id: 'o1', status: 'again' }, onConflict: { update: ['status'] } });
    const [u] = mergeRowChanges([{ change: del, at: at(1) }, { change: { op: 'update', table: 'orders', key: { id: 'o1' }, set: { status: 'x' } }, at: at(2) }], { stored: true });
    expect(u.change.op).toBe('delete');
  });

  it('refuses what one statement cannot express', () => {
    expect(() => mergeRowChanges([{ change: insert('o1'), at: at(1) }, { change: insert('o1'), at: at(2) }])).toThrow(UnsupportedRowChange);
    expect(() => mergeRowChanges([{ change: { op: 'delete', table: 'orders', key: { id: 'o1' } }, at: at(1) }, { change: insert('o1'), at: at(1) }])).toThrow(UnsupportedRowChange);
    expect(() => mergeRowChanges([{ change: insert('o1', { n: 1 }), at: at(1) }, { change: { op: 'update', table: 'orders', key: { id: 'o1' }, set: { n: increment(1) } }, at: at(1) }])).toThrow(
      'only ever incremented',
    );
    expect(() => mergeRowChanges([{ change: { ...insert('o1'), table: 'Orders; DROP' }, at: at(1) }])).toThrow('identifier');
    expect(() => mergeRowChanges([{ change: { op: 'update', table: 'orders', key: { id: eventFact('hash') }, set: {} }, at: at(1) }])).toThrow('plain value');
  });
});
