import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { OpenedEventStore, openEventStore } from '@app/event-store';
import { webhookMigrations } from '../webhooks.migrations';
import { TargetGuard } from '../sending/target-guard';
import { systemClock } from '@app/core';
import { CreateEndpointCommand } from '../create-endpoint/create-endpoint.command';
import { CreateEndpointHandler } from '../create-endpoint/create-endpoint.handler';
import { DeleteEndpointCommand } from '../delete-endpoint/delete-endpoint.command';
import { DeleteEndpointHandler } from '../delete-endpoint/delete-endpoint.handler';
import { RotateEndpointSecretCommand } from '../rotate-endpoint-secret/rotate-endpoint-secret.command';
import { RotateEndpointSecretHandler } from '../rotate-endpoint-secret/rotate-endpoint-secret.handler';
import { UpdateEndpointCommand } from '../update-endpoint/update-endpoint.command';
import { UpdateEndpointHandler } from '../update-endpoint/update-endpoint.handler';
import { EndpointCache, secretsAt } from './endpoint-cache';
import { EndpointChanges } from './endpoint-changes.repository';
import { EndpointRepository } from './endpoint.repository';
import { SqlEndpointRows } from './endpoint-rows.repository';
import { SqlEndpointSecrets } from './endpoint-secrets.repository';
import { SendTargets } from './send-targets';
import { TargetCheck } from './target-check';

/**
 * Two "processes" on one PostgreSQL (each its own pool and LISTEN connection): a change made
 * through one reaches the other's cache through NOTIFY, long before the cache's TTL.
 */
const url = process.env.DATABASE_URL as string;
if (!url) throw new Error('DATABASE_URL is required');
const schema = `wh_cache_${randomBytes(5).toString('hex')}`;
const kek = randomBytes(32);

/** The endpoint use cases of one "process", on its own store and database. */
function endpointsOn(o: OpenedEventStore) {
  const changes = new EndpointChanges(o.db);
  const repo = new EndpointRepository(o.store, changes);
  const rows = new SqlEndpointRows(o.db);
  const secrets = new SqlEndpointSecrets(o.db, kek);
  const targets = new TargetCheck(new TargetGuard(true));
  return {
    changes,
    sendTargets: new SendTargets(rows, secrets, systemClock),
    create: (org: string, input: { url: string }) => new CreateEndpointHandler(repo, rows, secrets, targets, systemClock).execute(new CreateEndpointCommand(org, input)),
    update: (org: string, id: string, edit: { enabled: boolean }) => new UpdateEndpointHandler(repo, rows, targets).execute(new UpdateEndpointCommand(org, id, edit)),
    rotateSecret: (org: string, id: string) => new RotateEndpointSecretHandler(repo, secrets, systemClock).execute(new RotateEndpointSecretCommand(org, id)),
    remove: (org: string, id: string) => new DeleteEndpointHandler(repo).execute(new DeleteEndpointCommand(org, id)),
  };
}

describe('EndpointCache across processes (postgres)', () => {
  let a: OpenedEventStore;
  let b: OpenedEventStore;
  let api: ReturnType<typeof endpointsOn>;
  let cache: EndpointCache;

  beforeAll(async () => {
    a = await openEventStore({ databaseUrl: url, schema, migrations: webhookMigrations });
    b = await openEventStore({ databaseUrl: url, schema, migrations: webhookMigrations });
    api = endpointsOn(a);
    const worker = endpointsOn(b);
    cache = new EndpointCache(worker.changes, (id) => worker.sendTargets.load(id), 60_000); // only a notification can refresh it in time
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
