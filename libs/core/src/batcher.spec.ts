import { Batcher } from './batcher';

const tick = () => new Promise((r) => setImmediate(r));
const settle = async () => {
  for (let i = 0; i < 5; i++) await tick();
};

describe('Batcher', () => {
  it('runs the calls of one turn together and answers each with its own result', async () => {
    const batches: number[][] = [];
    const sut = new Batcher<number, number>(async (items) => (batches.push(items), items.map((i) => i * 10)), { maxBatch: 100, maxInFlight: 1 });
    const results = await Promise.all([1, 2, 3].map((i) => sut.add(i)));
    expect(results).toEqual([10, 20, 30]);
    expect(batches).toEqual([[1, 2, 3]]);
  });

  it('queues calls made while batches run into the next batch, at most maxBatch at a time', async () => {
    const batches: number[][] = [];
    const gates: (() => void)[] = [];
    const sut = new Batcher<number, number>(
      (items) => {
        batches.push(items);
        return new Promise((resolve) => gates.push(() => resolve(items)));
      },
      { maxBatch: 2, maxInFlight: 1 },
    );
    const first = sut.add(1);
    await tick();
    const rest = [2, 3, 4, 5].map((i) => sut.add(i));
    await tick();
    expect(batches).toEqual([[1]]);
    expect(sut.pending).toEqual({ queued: 4, inFlight: 1 });
    gates.shift()!();
    await first;
    await settle();
    expect(batches).toEqual([[1], [2, 3]]);
    gates.shift()!();
    await settle();
    gates.shift()!();
    expect(await Promise.all(rest)).toEqual([2, 3, 4, 5]);
    expect(batches).toEqual([[1], [2, 3], [4, 5]]);
  });

  it('rejects every item of a failed batch and keeps serving later ones', async () => {
    let fail = true;
    const sut = new Batcher<number, number>(async (items) => {
      if (fail) throw new Error('database down');
      return items;
    }, { maxBatch: 10, maxInFlight: 2 });
    const failed = await Promise.allSettled([sut.add(1), sut.add(2)]);
    expect(failed.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    fail = false;
    expect(await sut.add(3)).toBe(3);
  });
});
