import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { OpenedEventStore, openEventStore } from '@app/event-store';
import { webhookMigrations } from '../webhooks.migrations';
import { TargetGuard } from '../sending/target-guard';
import { EndpointCache, secretsAt } from './endpoint-cache';
import { EndpointService } from './endpoint.service';

/**
 * Two "processes" on one PostgreSQL (each its own pool and LISTEN connection): a change made
 * through one reaches the other's cache through NOTIFY, long before the cache's TTL.
 */
const url = process.env.DATABASE_URL as string;
if (!url) throw new Error('DATABASE_URL is required');
const schema = `wh_cache_${randomBytes(5).toString('hex')}`;
const kek = randomBytes(32);

describe('EndpointCache across processes (postgres)', () => {
  let a: OpenedEventStore;
  let b: OpenedEventStore;
  let api: EndpointService;
  let cache: EndpointCache;

  beforeAll(async () => {
    a = await openEventStore({ databaseUrl: url, schema, migrations: webhookMigrations });
    b = await openEventStore({ databaseUrl: url, schema, migrations: webhookMigrations });
    api = new EndpointService(a.db, a.store, kek, new TargetGuard(true));
    const worker = new EndpointService(b.db, b.store, kek, new TargetGuard(true));
    cache = new EndpointCache(b.db, (id) => worker.sendTarget(id), 60_000); // only a notification can refresh it in time
    await cache.start();
  });

  afterAll(async () => {
    await cache?.stop();
    for (const s of [a, b]) {
      await s?.store.close();
      await s?.db.close();
    }
    const c = new Client({ connectionString: url });
    await c.connect();
    await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await c.end();
  });

  const eventually = async (check: () => Promise<boolean>, ms = 5_000) => {
    const deadline = Date.now() + ms;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error('not within the time');
      await new Promise((r) => setTimeout(r, 10));
    }
  };

  it('sees another process disable, re-enable and rotate an endpoint within moments', async () => {
    const ep = await api.create('org_cache', { url: 'http://127.0.0.1:9/hook' });
    const first = await cache.get(ep.id);
    expect(first).toMatchObject({ enabled: true, deleted: false });
    expect(secretsAt(first!, new Date())).toEqual([ep.secret]);

    await api.update('org_cache', ep.id, { enabled: false });
    await eventually(async () => (await cache.get(ep.id))!.enabled === false);

    await api.update('org_cache', ep.id, { enabled: true });
    await eventually(async () => (await cache.get(ep.id))!.enabled === true);

    const rotated = await api.rotateSecret('org_cache', ep.id);
    await eventually(async () => secretsAt((await cache.get(ep.id))!, new Date()).length === 2);
    expect(secretsAt((await cache.get(ep.id))!, new Date())).toEqual([rotated.secret, ep.secret]);

    await api.remove('org_cache', ep.id);
    await eventually(async () => (await cache.get(ep.id))!.deleted);
  });
});
