import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import Redis from 'ioredis';
import { Client } from 'pg';
import { openEventStore, SqlDatabase, SqlEventStore } from '@app/event-store';
import { signingKeyMigrations } from '@app/notary';
import { systemClock } from '@app/core';
import { CreateEndpointCommand, CreateEndpointHandler, EndpointRepository, SqlEndpointRows, SqlEndpointSecrets, TargetCheck, TargetGuard, webhookMigrations } from '@app/webhooks';
import { commerceLifecycle } from '../bench/commerce-events';
import { TEST_KEY_ENCRYPTION_KEY } from '../support/test-kek';
import { eventually, WebhookReceiver } from '../support/webhook-receiver';

/**
 * Webhook delivery under faults, with real worker processes on PostgreSQL and Redis: 2,000
 * lifecycle events each time, and mid-run (1) the worker is killed with SIGKILL and restarted,
 * (2) Redis is flushed and the worker restarted. Every delivery must reach the receiver at
 * least once, and the unique webhook-ids received must equal the deliveries scheduled.
 * The suite has its own schema and its own Redis database, so flushing it touches nothing else.
 */
const url = process.env.DATABASE_URL as string;
const redisBase = process.env.REDIS_URL as string;
if (!url || !redisBase) throw new Error('DATABASE_URL and REDIS_URL are required');
const root = resolve(__dirname, '../..');
const schema = `chaos_${randomBytes(5).toString('hex')}`;
const prefix = `sigil-chaos-${randomBytes(4).toString('hex')}`;
const REDIS_DB = 9;
const EVENTS = 2000; // 250 transactions of 8 events

describe('webhook delivery under faults (postgres + redis)', () => {
  let build: string;
  let db: SqlDatabase;
  let store: SqlEventStore;
  let endpoints: { create(orgId: string, input: { url: string }): Promise<{ id: string }> };
  let receiver: WebhookReceiver;
  let redis: Redis;
  const children = new Set<ChildProcess>();
  const redisUrl = (() => {
    const u = new URL(redisBase);
    u.pathname = `/${REDIS_DB}`;
    return u.toString();
  })();

  beforeAll(async () => {
    build = mkdtempSync(join(tmpdir(), 'sigil-chaos-'));
    execFileSync(process.execPath, [require.resolve('@swc/cli/bin/swc.js'), 'apps', 'libs', '-d', build, '--config-file', '.swcrc', '--quiet'], { cwd: root });
    const pg = new Client({ connectionString: url });
    await pg.connect();
    await pg.query(`CREATE SCHEMA ${schema}`);
    await pg.end();
    ({ db, store } = await openEventStore({ databaseUrl: url, schema, migrations: [...signingKeyMigrations, ...webhookMigrations] }));
    const register = new CreateEndpointHandler(
      new EndpointRepository(store),
      new SqlEndpointRows(db),
      new SqlEndpointSecrets(db, Buffer.from(TEST_KEY_ENCRYPTION_KEY, 'base64')),
      new TargetCheck(new TargetGuard(true)),
      systemClock,
    );
    endpoints = { create: (orgId, input) => register.execute(new CreateEndpointCommand(orgId, input)) };
    receiver = await new WebhookReceiver().start();
    redis = new Redis(redisUrl);
    await redis.flushdb();
  }, 120_000);

  afterAll(async () => {
    for (const c of children) c.kill('SIGKILL');
    await redis?.flushdb().catch(() => undefined);
    await redis?.quit();
    await receiver?.close();
    await store?.close();
    await db?.close();
    const pg = new Client({ connectionString: url });
    await pg.connect();
    await pg.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await pg.end();
    rmSync(build, { recursive: true, force: true });
  });

  /** A worker process (`start:worker`'s entry point), resolving once it runs. */
  async function startWorker(): Promise<{ child: ChildProcess; exited: Promise<string | number | null>; output: () => string }> {
    const u = new URL(url);
    u.searchParams.set('options', `-c search_path=${schema}`);
    const child = spawn(process.execPath, [join(build, 'apps/worker/src/main.js')], {
      env: {
        PATH: process.env.PATH,
        NODE_PATH: join(root, 'node_modules'),
        DATABASE_URL: u.toString(),
        REDIS_URL: redisUrl,
        KEY_ENCRYPTION_KEY: TEST_KEY_ENCRYPTION_KEY,
        WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
        WEBHOOK_QUEUE_PREFIX: prefix,
        WEBHOOK_TIMEOUT_MS: '2000',
        WEBHOOK_RETRY_SCHEDULE_MS: '200,500,1000,2000,4000',
        LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.add(child);
    let out = '';
    child.stdout!.on('data', (d) => (out += d));
    child.stderr!.on('data', (d) => (out += d));
    const exited = new Promise<string | number | null>((r) => child.on('exit', (code, signal) => (children.delete(child), r(signal ?? code))));
    await Promise.race([
      eventually(() => out.includes('sigil worker running'), 60_000, 'the worker to start'),
      exited.then((code) => Promise.reject(new Error(`worker exited (${code}) at start:\n${out.slice(-2000)}`))),
    ]);
    return { child, exited, output: () => out };
  }

  /** Appends 250 full lifecycles (2,000 events) for the organization, in batches of 10 streams at once. */
  async function appendEvents(orgId: string): Promise<void> {
    for (let i = 0; i < EVENTS / 8; i += 10) {
      await Promise.all(
        Array.from({ length: 10 }, () => {
          const l = commerceLifecycle(orgId, 'full');
          return store.append(l.stream, l.events, { expectedRevision: 'no_stream' });
        }),
      );
    }
  }

  const uniqueIds = (path: string) => new Set(receiver.on(path).map((r) => String(r.headers['webhook-id'])));
  const scheduled = async (endpointId: string) =>
    new Set((await db.query<{ event_id: string }>('SELECT event_id FROM webhook_deliveries WHERE endpoint_id = $1', [endpointId])).map((r) => r.event_id));
  const delivered = async (endpointId: string) =>
    Number((await db.query<{ n: string }>(`SELECT count(*) AS n FROM webhook_deliveries WHERE endpoint_id = $1 AND status = 'delivered'`, [endpointId]))[0].n);

  async function expectAllDelivered(endpointId: string, path: string): Promise<void> {
    await eventually(async () => (await delivered(endpointId)) === EVENTS && uniqueIds(path).size >= EVENTS, 150_000, 'every delivery');
    const ids = await scheduled(endpointId);
    expect(ids.size).toBe(EVENTS);
    expect(uniqueIds(path)).toEqual(ids);
  }

  it('delivers every event at least once when the worker is killed with SIGKILL mid-run and restarted', async () => {
    const orgId = `org_chaos_kill_${randomBytes(4).toString('hex')}`;
    const route = receiver.route('kill');
    const ep = await endpoints.create(orgId, { url: route.url });
    const first = await startWorker();
    const appended = appendEvents(orgId);
    await eventually(() => uniqueIds(route.path).size >= 400, 120_000, 'deliveries under way');
    first.child.kill('SIGKILL');
    expect(await first.exited).toBe('SIGKILL');
    await appended;
    // Killed mid-run: deliveries were left unfinished for the next worker.
    expect(uniqueIds(route.path).size).toBeLessThan(EVENTS);
    expect(await delivered(ep.id)).toBeLessThan(EVENTS);

    const second = await startWorker();
    await expectAllDelivered(ep.id, route.path);
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  }, 300_000);

  it('delivers every event at least once when Redis is flushed mid-run and the worker restarted', async () => {
    const orgId = `org_chaos_flush_${randomBytes(4).toString('hex')}`;
    const route = receiver.route('flush');
    const ep = await endpoints.create(orgId, { url: route.url });
    const first = await startWorker();
    const appended = appendEvents(orgId);
    await eventually(() => uniqueIds(route.path).size >= 400, 120_000, 'deliveries under way');
    await redis.flushdb();
    // Flushed mid-run: the queue lost deliveries that the store still has pending.
    expect(await delivered(ep.id)).toBeLessThan(EVENTS);
    await appended;
    first.child.kill('SIGTERM');
    await first.exited;

    const second = await startWorker();
    await expectAllDelivered(ep.id, route.path);
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  }, 300_000);
});
