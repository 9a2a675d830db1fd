import { PeriodicSweep } from './periodic-sweep';

/** A `due` that records when each pass read what was due, and can be held open. */
function dueRecorder() {
  const reads: number[] = [];
  let release: (() => void) | null = null;
  let clock = 0;
  return {
    reads,
    advance: () => ++clock,
    /** The next pass reads, then waits until `open()`. */
    hold: () => new Promise<void>((r) => (release = r)),
    open: () => release?.(),
    due: async (held: Promise<void> | null) => {
      reads.push(clock);
      if (held) await held;
      return 1;
    },
  };
}

describe('PeriodicSweep.tick', () => {
  const logger = { warn: jest.fn() };

  /** A sweep whose first pass reads what is due and then waits until `r.open()`; later passes do not wait. */
  const sweepHeldOnFirstPass = () => {
    const r = dueRecorder();
    let held: Promise<void> | null = r.hold();
    const sweep = new PeriodicSweep(
      () => {
        const h = held;
        held = null;
        return r.due(h);
      },
      60_000,
      logger,
    );
    return { r, sweep };
  };

  it('a pass asked for while one runs is a pass of its own, begun after the running one (it may have read too early)', async () => {
    const { r, sweep } = sweepHeldOnFirstPass();
    const first = sweep.tick(); // reads at time 0, then waits
    await Promise.resolve();
    r.advance(); // an item comes due after the running pass read
    const asked = sweep.tick();
    const alsoAsked = sweep.tick();
    r.open();
    expect(await first).toBe(1);
    // The two asked meanwhile share one more pass, which read after the item came due.
    expect(await asked).toBe(1);
    expect(await alsoAsked).toBe(1);
    expect(r.reads).toEqual([0, 1]);
  });

  it('a pass asked for when none runs starts at once; stop waits for a queued one', async () => {
    const { r, sweep } = sweepHeldOnFirstPass();
    const first = sweep.tick();
    const queued = sweep.tick();
    const stopped = sweep.stop();
    r.open();
    await stopped;
    expect(r.reads).toHaveLength(2);
    expect([await first, await queued]).toEqual([1, 1]);
    expect(await sweep.tick()).toBe(1);
    expect(r.reads).toHaveLength(3);
  });

  it('a failed pass rejects every caller who asked for it, is logged, and the next tick runs again', async () => {
    const warn = jest.fn();
    let fail = true;
    const sweep = new PeriodicSweep(
      async () => {
        await Promise.resolve();
        if (fail) throw new Error('connection refused');
        return 3;
      },
      60_000,
      { warn },
      [],
      'test sweep',
    );
    const first = sweep.tick();
    const queued = sweep.tick(); // asked while the failing pass runs: the next pass, which fails too
    await expect(first).rejects.toThrow('connection refused');
    await expect(queued).rejects.toThrow('connection refused');
    expect(warn).toHaveBeenCalledTimes(2);
    expect(warn).toHaveBeenCalledWith({ err: 'connection refused' }, 'test sweep failed; retrying next tick');
    fail = false;
    expect(await sweep.tick()).toBe(3);
    await sweep.stop();
  });

  it('start({ now: true }) runs a pass at once as well as on the interval', async () => {
    const due = jest.fn(async () => 0);
    const sweep = new PeriodicSweep(due, 60_000, logger);
    sweep.start({ now: true });
    await sweep.stop();
    expect(due).toHaveBeenCalledTimes(1);
  });
});
