/**
 * `webhook`: commerce lifecycle events → fan-out → signed delivery on BullMQ → a local receiver
 * that answers 200, on PostgreSQL and Redis. `ops_per_s` is deliveries received per second;
 * latency is each event's `recorded_at` → the receiver got its webhook (first arrival).
 *
 * This process runs the service: the api with its workers (projections, fan-out, delivery) in a
 * fresh schema with its own queue prefix, or BENCH_WORKERS `start:worker` processes doing the
 * work. The other side runs in a child process (test/bench/webhook-peer.ts): the source of the
 * events (whole transaction lifecycles of 8 events, the commerce contract's shape, appended at a
 * steady rate with their own pool, as api processes would) and the receiver (checks every v1
 * signature and a sample of v1a). One organization with BENCH_ENDPOINTS (1) endpoints
 * subscribed to every event type, so each event makes that many deliveries.
 *
 * BENCH_WEBHOOK_QUEUE=store runs the deliveries on the store's scheduler (what embedded mode
 * uses, leases in PostgreSQL) instead of BullMQ, to tell the queue's cost from the rest.
 *
 * BENCH_RATE deliveries/s are offered (default 3,000; 0 = as fast as the store takes the events,
 * which measures how fast a backlog drains, not latency), after an unmeasured warm-up. The
 * service keeps up when ops_per_s is close to the rate and p99 stays low. errors = deliveries not
 * received (or not recorded as delivered in the store) within BENCH_DEADLINE_MS of the last
 * append, plus requests with a bad signature. The line also gives the CPU each delivery cost in
 * each process (from /proc): this process, worker processes, PostgreSQL backends (the service's,
 * and apart the source's), Redis (the whole server), and the peer.
 */
import { ChildProcess, fork, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Client } from 'pg';
import { APP_CONFIG, AppConfig, createRedis, KEY_ENCRYPTION_KEY } from '@app/core';
import { SqlDatabase } from '@app/event-store';
import { WEBHOOK_SETTINGS, WebhookSettings } from '@app/webhooks';
import { DEFAULT_DATABASE_URL, DEFAULT_REDIS_URL, startBenchApi } from '../api';
import { BenchResult, cleanupOnInterrupt, envInt, errorMessage, failedResult, log, percentile, round, Scenario } from '../harness';
import { ProcessCpu } from '../proc-cpu';
import type { PeerCounts, PeerReply, PeerRequest } from '../webhook-peer';

const hex = (bytes: number) => randomBytes(bytes).toString('hex');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** For the losing side of a race: does not keep the process alive once the race is decided. */
const deadline = (ms: number) => new Promise((r) => setTimeout(r, ms).unref());
const withParam = (url: string, param: string) => `${url}${url.includes('?') ? '&' : '?'}${param}`;

/** The peer process: one request at a time, each answered once. */
class Peer {
  private queue: Promise<unknown> = Promise.resolve();

  private constructor(private readonly child: ChildProcess) {}

  static start(): Peer {
    return new Peer(fork(join(__dirname, '..', 'webhook-peer.js'), [], { serialization: 'advanced', stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }));
  }

  get pid(): number {
    return this.child.pid!;
  }

  ask<T extends PeerReply['type']>(request: PeerRequest, expect: T): Promise<Extract<PeerReply, { type: T }>> {
    const next = this.queue.then(
      () =>
        new Promise<Extract<PeerReply, { type: T }>>((resolve, reject) => {
          const onExit = (code: number | null) => reject(new Error(`webhook peer exited (${code})`));
          this.child.once('exit', onExit);
          this.child.once('message', (m: PeerReply) => {
            this.child.off('exit', onExit);
            if (m.type === expect) resolve(m as Extract<PeerReply, { type: T }>);
            else reject(new Error(m.type === 'error' ? `webhook peer: ${m.message}` : `webhook peer answered ${m.type}, expected ${expect}`));
          });
          this.child.send(request);
        }),
    );
    this.queue = next.catch(() => undefined);
    return next;
  }

  async counts(): Promise<PeerCounts> {
    return this.ask({ type: 'counts' }, 'counts');
  }

  async close(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((r) => this.child.once('exit', r));
    if (this.child.connected) this.child.send({ type: 'close' } satisfies PeerRequest);
    await Promise.race([exited, deadline(5000).then(() => this.child.kill('SIGKILL'))]);
  }
}

/** A `start:worker` process (the built worker app): projections, fan-out and delivery, no HTTP. */
async function startWorker(env: Record<string, string>): Promise<{ pid: number; stop(): Promise<void> }> {
  const child = spawn(process.execPath, [join(__dirname, '..', '..', '..', 'apps', 'worker', 'src', 'main.js')], {
    env: { PATH: process.env.PATH ?? '', ...env, LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const keep = (d: Buffer) => (out = (out + d.toString()).slice(-20_000));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<number | string | null>((resolve) => child.on('exit', (code, signal) => resolve(signal ?? code)));
  const running = (async () => {
    while (!out.includes('sigil worker running') && child.exitCode === null) await sleep(50);
  })();
  const state = await Promise.race([running.then(() => 'running' as const), exited, deadline(60_000).then(() => 'timeout' as const)]);
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await Promise.race([exited, deadline(15_000).then(() => child.kill('SIGKILL'))]);
  };
  if (state !== 'running') {
    await stop();
    throw new Error(`worker process did not start (${state}): ${out.slice(-2000)}`);
  }
  return { pid: child.pid!, stop };
}

/** µs per delivery for each group, their total, and the total without writing the source events. */
function perDelivery(us: Record<string, number>, deliveries: number): Record<string, number> {
  const out: Record<string, number> = {};
  let total = 0;
  for (const [k, v] of Object.entries(us)) {
    out[k] = deliveries ? round(v / deliveries, 0) : 0;
    if (k !== 'peer') total += v;
  }
  out.service_total = deliveries ? round(total / deliveries, 0) : 0;
  // What delivering costs without writing the events (the commerce api's share).
  out.delivery_total = out.service_total - (out.postgres_event_source ?? 0);
  return out;
}

export const webhookScenario: Scenario = {
  name: 'webhook',
  description: 'commerce events → fan-out → signed delivery (BullMQ) → local receiver; deliveries/s, recorded → received (postgres + redis)',
  modes: ['postgres'],
  async run(mode: string): Promise<BenchResult> {
    const n = envInt('BENCH_N', 30_000);
    const rate = process.env.BENCH_RATE?.trim() === '0' ? 0 : envInt('BENCH_RATE', 3_000);
    const endpointCount = envInt('BENCH_ENDPOINTS', 1);
    const warmup = envInt('BENCH_WARMUP', 3_000);
    const deadlineMs = envInt('BENCH_DEADLINE_MS', 60_000);
    const appenders = envInt('BENCH_CONCURRENCY', 16);
    const workerCount = !process.env.BENCH_WORKERS || process.env.BENCH_WORKERS.trim() === '0' ? 0 : envInt('BENCH_WORKERS', 1);
    const webhookConcurrency = process.env.WEBHOOK_CONCURRENCY;
    const url = process.env.DATABASE_URL ?? DEFAULT_DATABASE_URL;
    const redisUrl = process.env.REDIS_URL ?? DEFAULT_REDIS_URL;
    const schema = `bench_webhook_${hex(5)}`;
    const prefix = `bench-webhook-${hex(4)}`;
    const admin = new Client({ connectionString: url });
    let peer: Peer | null = null;
    const cleanup = async () => {
      await peer?.close();
      peer = null;
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch((err) => log(`webhook: could not drop ${schema}: ${errorMessage(err)}`));
      await admin.end().catch(() => undefined);
      const redis = createRedis(redisUrl);
      try {
        let cursor = '0';
        do {
          const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
          if (keys.length) await redis.del(...keys);
          cursor = next;
        } while (cursor !== '0');
      } finally {
        redis.disconnect();
      }
    };
    const forget = cleanupOnInterrupt(cleanup);
    const loadAtStart = loadavg().map((l) => round(l, 2));
    let base = { bench: 'webhook', mode, n, concurrency: 0 };
    try {
      await admin.connect();
      await admin.query(`CREATE SCHEMA ${schema}`);
      const api = await startBenchApi({
        // BENCH_WEBHOOK_QUEUE=store: the store's own scheduler instead of BullMQ (Redis then counts no limits either).
        redis: process.env.BENCH_WEBHOOK_QUEUE !== 'store',
        schema,
        scopes: ['webhooks:manage'],
        orgName: 'bench-webhook',
        applicationName: schema,
        env: {
          WORKERS: workerCount > 0 ? 'off' : 'on',
          RATE_LIMITS: 'off',
          WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
          WEBHOOK_QUEUE_PREFIX: prefix,
          ...(webhookConcurrency ? { WEBHOOK_CONCURRENCY: webhookConcurrency } : {}),
        },
      });
      const workers: Awaited<ReturnType<typeof startWorker>>[] = [];
      try {
        const settings = api.app.get<symbol, WebhookSettings>(WEBHOOK_SETTINGS);
        base = { ...base, concurrency: settings.concurrency };
        const db = api.app.get(SqlDatabase);
        const call = async (method: string, path: string, body?: unknown) => {
          const res = await fetch(`${api.url}${path}`, {
            method,
            headers: { authorization: `Bearer ${api.key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
            body: body ? JSON.stringify(body) : undefined,
          });
          const json = (await res.json()) as Record<string, unknown>;
          if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
          return json;
        };
        const keysDocument = (await call('GET', '/.well-known/signing-keys.json')) as { keys: { public_key: string; status: string }[] };
        const p = (peer = Peer.start());
        const { port } = await p.ask(
          {
            type: 'init',
            publicKeys: keysDocument.keys.filter((k) => k.status !== 'revoked').map((k) => k.public_key),
            ed25519Every: 50,
            // The source's own pool, told apart from the service's in pg_stat_activity.
            databaseUrl: withParam(url, `application_name=${schema}_source`),
            schema,
          },
          'ready',
        );
        const paths = Array.from({ length: endpointCount }, (_, i) => `/ep${i}`);
        const endpointIds: string[] = [];
        for (const path of paths) {
          const ep = (await call('POST', '/api/cdp/webhooks/endpoints', { url: `http://127.0.0.1:${port}${path}`, description: 'bench receiver' })) as { id: string; secret: string };
          endpointIds.push(ep.id);
          await p.ask({ type: 'secret', path, secret: ep.secret }, 'ok');
        }
        const [{ org_id: orgId }] = await db.query<{ org_id: string }>('SELECT org_id FROM webhook_endpoints WHERE id = $1', [endpointIds[0]]);
        const config = api.app.get<symbol, AppConfig>(APP_CONFIG);
        const workerEnv = {
          DATABASE_URL: config.DATABASE_URL!,
          REDIS_URL: config.REDIS_URL!,
          KEY_ENCRYPTION_KEY: api.app.get<symbol, Buffer>(KEY_ENCRYPTION_KEY).toString('base64'),
          WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
          WEBHOOK_QUEUE_PREFIX: prefix,
          ...(webhookConcurrency ? { WEBHOOK_CONCURRENCY: webhookConcurrency } : {}),
        };
        for (let i = 0; i < workerCount; i++) workers.push(await startWorker(workerEnv));
        log(
          `webhook: schema ${schema}, queue prefix ${prefix}, ${endpointCount} endpoint(s), ${workerCount ? `${workerCount} worker process(es)` : 'workers in this process'}, ` +
            `webhook concurrency ${settings.concurrency} per process, rate ${rate || 'unpaced'}/s, load ${loadAtStart.join(' ')}`,
        );

        const produce = (deliveries: number) => p.ask({ type: 'produce', orgId, paths, deliveries, rate, concurrency: appenders }, 'produced');
        const waitReceived = async (target: number, label: string): Promise<PeerCounts> => {
          const deadline = Date.now() + deadlineMs;
          let last = 0;
          for (;;) {
            const c = await p.counts();
            if (c.unique >= target || Date.now() > deadline) return c;
            if (Date.now() - last > 2000) {
              last = Date.now();
              log(`webhook ${label}: ${c.unique}/${target} received, ${c.duplicates} duplicates`);
            }
            await sleep(20);
          }
        };

        // Warm-up: connections, prepared statements, JIT; not measured.
        const warm = await produce(warmup);
        const before = (await waitReceived(warm.expected.length, 'warm-up')).unique;
        if (before < warm.expected.length) throw new Error(`warm-up: only ${before} of ${warm.expected.length} deliveries arrived within ${deadlineMs} ms`);

        const redisPid = await (async () => {
          const redis = createRedis(redisUrl);
          try {
            return Number(/process_id:(\d+)/.exec(await redis.info('server'))?.[1] ?? 0);
          } finally {
            redis.disconnect();
          }
        })();
        const meter = new ProcessCpu(async () => [
          { pid: p.pid, group: 'peer' },
          ...workers.map((w) => ({ pid: w.pid, group: 'worker_processes' })),
          ...(
            await admin.query<{ pid: number; app: string }>('SELECT pid, application_name AS app FROM pg_stat_activity WHERE application_name IN ($1, $2)', [schema, `${schema}_source`])
          ).rows.map((r) => ({ pid: r.pid, group: r.app === schema ? 'postgres' : 'postgres_event_source' })),
          ...(redisPid ? [{ pid: redisPid, group: 'redis' }] : []),
        ]);
        await meter.start();
        const cpu0 = process.cpuUsage();
        const elu0 = performance.eventLoopUtilization();
        const t0 = performance.now();
        const run = await produce(n);
        log(`webhook: appended ${run.expected.length / endpointCount} events in ${(run.produceMs / 1000).toFixed(1)} s (${round(run.expected.length / (run.produceMs / 1000), 0)} deliveries/s offered)`);
        const counts = await waitReceived(before + run.expected.length, 'run');
        const elapsedMs = performance.now() - t0;
        const cpu = process.cpuUsage(cpu0);
        const elu = performance.eventLoopUtilization(elu0);
        const used = await meter.stop();

        const dump = await p.ask({ type: 'dump' }, 'dump');
        const seen = new Map(dump.keys.map((k, i) => [k, dump.times[i]]));
        const latencies: number[] = [];
        let firstRecorded = Infinity;
        let lastReceived = 0;
        for (const [key, recordedAt] of run.expected) {
          firstRecorded = Math.min(firstRecorded, recordedAt);
          const at = seen.get(key);
          if (at === undefined) continue;
          latencies.push(at - recordedAt);
          lastReceived = Math.max(lastReceived, at);
        }
        const sorted = Float64Array.from(latencies).sort();
        const missing = run.expected.length - latencies.length;

        // Delivered means acknowledged and recorded: every attempt is in the store.
        const total = warm.expected.length + run.expected.length;
        const storeDeadline = Date.now() + 30_000;
        let recorded = 0;
        for (;;) {
          [{ n: recorded }] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE status = 'delivered'`);
          if (recorded >= total || Date.now() > storeDeadline) break;
          await sleep(100);
        }
        const spanS = (lastReceived - firstRecorded) / 1000;
        const result: BenchResult = {
          ...base,
          ops_per_s: latencies.length && spanS > 0 ? round(latencies.length / spanS, 1) : 0,
          p50_ms: round(percentile(sorted, 50), 2),
          p99_ms: round(percentile(sorted, 99), 2),
          errors: missing + counts.badSignatures + Math.max(0, total - recorded - missing),
          offered_per_s: rate || 'unpaced',
          appended_per_s: round(run.expected.length / (run.produceMs / 1000), 1),
          endpoints: endpointCount,
          events: run.expected.length / endpointCount,
          max_ms: round(sorted.length ? sorted[sorted.length - 1] : 0, 2),
          missing,
          bad_signatures: counts.badSignatures,
          duplicates: counts.duplicates,
          ed25519_checked: counts.ed25519Checked,
          recorded_delivered: recorded,
          warmup_deliveries: warm.expected.length,
          worker_processes: workerCount,
          // CPU per delivery in each process (redis: the whole server, others' use included; peer: source + receiver).
          cpu_us_per_delivery: perDelivery({ service_process: cpu.user + cpu.system, ...used.groupsUs }, latencies.length),
          service_cpu_pct: round(((cpu.user + cpu.system) / 1000 / elapsedMs) * 100, 0),
          event_loop_pct: round(elu.utilization * 100, 0),
          machine_busy_pct: used.machineBusyPct,
          elapsed_s: round(elapsedMs / 1000, 2),
          load_at_start: loadAtStart,
        };
        if (missing > 0) result.error = `${missing} deliveries not received within ${deadlineMs} ms of the last append`;
        else if (recorded < total) result.error = `${total - recorded} deliveries not recorded as delivered`;
        else if (counts.badSignatures > 0) result.error = `${counts.badSignatures} requests with a bad signature`;
        return result;
      } finally {
        await Promise.all(workers.map((w) => w.stop()));
        await api.close();
      }
    } catch (err) {
      return failedResult(base, errorMessage(err));
    } finally {
      await cleanup();
      forget();
    }
  },
};
