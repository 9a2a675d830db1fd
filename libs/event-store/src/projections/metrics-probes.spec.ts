import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { openEventStore, OpenedEventStore } from '../open-event-store';
import { subscribedReadModel } from './projection-runner';
import { ProjectionHost } from './projection-host';

const url = process.env.DATABASE_URL;

/** What the metrics read from the store: append timing, checkpointed readers' lag, the pool (PGlite, or PostgreSQL when DATABASE_URL is set). */
describe('event store metrics probes', () => {
  let opened: OpenedEventStore;
  const timed: { method: string; seconds: number }[] = [];
  const schema = `t_${randomBytes(6).toString('hex')}`;

  beforeAll(async () => {
    opened = await openEventStore({ databaseUrl: url, schema: url ? schema : undefined, onAppend: (method, seconds) => timed.push({ method, seconds }) });
  }, 60_000);
  afterAll(async () => {
    await opened.store.close();
    await opened.db.close();
    if (url) {
      const c = new Client({ connectionString: url });
      await c.connect();
      await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await c.end();
    }
  });

  it('times every append and appendMany, refused ones too', async () => {
    timed.length = 0;
    await opened.store.append('probe-a', [{ type: 'probe.happened', data: {} }], { expectedRevision: 'no_stream' });
    await expect(opened.store.append('probe-a', [{ type: 'probe.happened', data: {} }], { expectedRevision: 'no_stream' })).rejects.toThrow();
    await opened.store.appendMany([{ stream: 'probe-b', events: [{ type: 'probe.happened', data: {} }], expected: 'no_stream' }]);
    expect(timed.map((t) => t.method)).toEqual(['append', 'append', 'append_many']);
    for (const t of timed) expect(t.seconds).toBeGreaterThan(0);
  });

  it("reports each checkpointed reader's events still to read, and a projection not yet run as behind by all", async () => {
    const projection = subscribedReadModel({ name: 'probe_lagging', filter: { eventTypes: ['probe.happened'] }, tables: [], apply: () => [] });
    const host = new ProjectionHost(opened.db, opened.store, [projection], false);
    const total = (await opened.store.readAll({ fromPosition: 0, limit: 1000 })).events.length;
    expect(await host.lag()).toEqual([{ name: 'probe_lagging', behind: total }]);
    await host.catchUp();
    expect(await host.lag()).toEqual([{ name: 'probe_lagging', behind: 0 }]);
    await opened.store.append('probe-c', [{ type: 'other.happened', data: {} }, { type: 'other.happened', data: {} }]);
    expect(await host.lag()).toEqual([{ name: 'probe_lagging', behind: 2 }]);
  });

  it('reports the PostgreSQL pool, and none for the embedded database', async () => {
    if (!url) return expect(opened.db.poolStats()).toBeNull();
    const stats = opened.db.poolStats()!;
    expect(stats).toEqual({ total: expect.any(Number), idle: expect.any(Number), waiting: 0 });
    expect(stats.total).toBeGreaterThan(0);
  });
});
