/**
 * `webhook`: commerce lifecycle events → fan-out → signed delivery on BullMQ → a local receiver
 * that answers 200, on PostgreSQL and Redis. `ops_per_s` is deliveries received per second;
 * latency is each event's `recorded_at` → the receiver got its webhook (first arrival).
 *
 * The api runs here with its workers (projections, fan-out, delivery) in a fresh schema with its
 * own queue prefix; the receiver runs in a worker thread (test/bench/webhook-receiver.ts) and
 * checks every v1 signature and a sample of v1a. One organization with BENCH_ENDPOINTS (1)
 * endpoints subscribed to every event type, so each event makes that many deliveries.
 *
 * Events are appended at a steady rate (BENCH_RATE deliveries/s, default 3,000; 0 = as fast as
 * the store takes them, which measures the backlog's drain rate, not latency), in whole
 * transaction lifecycles of 8 events per append (the commerce contract's shape), after an
 * unmeasured warm-up. The run passes when the service keeps up: ops_per_s close to the rate and
 * a low p99. errors = deliveries not received (or not recorded as delivered in the store) within
 * BENCH_DEADLINE_MS of the last append, plus requests with a bad signature.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { Client } from 'pg';
import { APP_CONFIG, AppConfig, createRedis, KEY_ENCRYPTION_KEY } from '@app/core';
import { NewEvent, SqlDatabase, SqlEventStore } from '@app/event-store';
import { WEBHOOK_SETTINGS, WebhookSettings } from '@app/webhooks';
import { DEFAULT_DATABASE_URL, DEFAULT_REDIS_URL, startBenchApi } from '../api';
import { BenchResult, cleanupOnInterrupt, envInt, errorMessage, failedResult, log, percentile, round, Scenario } from '../harness';
import { COUNTERS, ReceiverInit, ReceiverMessage } from '../webhook-receiver';

const EVENTS_PER_LIFECYCLE = 8;
const hex = (bytes: number) => randomBytes(bytes).toString('hex');

/** One transaction's full lifecycle, shaped as the commerce contract fixes it (as test/support/commerce-events.ts). */
function lifecycle(orgId: string): { stream: string; events: NewEvent[] } {
  const transactionId = `txn_${hex(16)}`;
  const authorizationId = `auth_${hex(16)}`;
  const policy = { policy_id: 'default', policy_hash: `sha256:${'ab'.repeat(32)}` };
  const actor = 'api_key:key_bench';
  const ev = (type: string, status: string, data: Record<string, unknown>, by = actor): NewEvent => ({
    type,
    data: { transaction_id: transactionId, authorization_id: authorizationId, organization_id: orgId, status, ...data },
    metadata: { actor: by, correlation_id: transactionId },
  });
  return {
    stream: `transaction-${transactionId}`,
    events: [
      ev('authorization.requested', 'evaluating', {
        request: { amount_cents: 12_500, currency: 'USD', merchant_id: 'm_books', purpose: 'software' },
        ...policy,
        mode: 'test',
        provider: 'sandbox',
      }),
      ev('authorization.escalated', 'needs_review', { decision: 'needs_review', reason_code: 'AMOUNT_ABOVE_REVIEW', ...policy }),
      ev('authorization.human_approved', 'authorized', { approver: 'key_reviewer', note: 'ok', amount_cents: 12_000 }),
      ev('execution.initiated', 'authorized', { attempt: 1, provider: 'sandbox', provider_idempotency_key: hex(8), amount_cents: 12_000 }, 'system:settlement'),
      ev('execution.failed', 'authorized', { attempt: 1, provider: 'sandbox', error_code: 'provider_unavailable', retryable: true }, 'system:settlement'),
      ev('execution.initiated', 'authorized', { attempt: 2, provider: 'sandbox', provider_idempotency_key: hex(8), amount_cents: 12_000 }, 'system:settlement'),
      ev('execution.succeeded', 'executed', { attempt: 2, provider: 'sandbox', provider_reference: `sbx_${hex(6)}`, amount_cents: 12_000 }, 'system:settlement'),
      ev('receipt.issued', 'receipt_issued', { receipt_hash: `sha256:${hex(32)}`, key_id: '00000000-0000-4000-8000-000000000000' }, 'system:receipts'),
    ],
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A `start:worker` process (the built worker app): projections, fan-out and delivery, no HTTP. */
async function startWorker(env: Record<string, string>): Promise<{ stop(): Promise<void>; output(): string }> {
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
  const code = await Promise.race([running.then(() => 'running' as const), exited, sleep(60_000).then(() => 'timeout' as const)]);
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await Promise.race([exited, sleep(15_000).then(() => child.kill('SIGKILL'))]);
  };
  if (code !== 'running') {
    await stop();
    throw new Error(`worker process did not start (${code}): ${out.slice(-2000)}`);
  }
  return { stop, output: () => out };
}

class Receiver {
  private constructor(
    private readonly worker: Worker,
    private readonly counters: Int32Array,
    readonly port: number,
  ) {}

  static async start(init: Omit<ReceiverInit, 'counters'>): Promise<Receiver> {
    const counters = new SharedArrayBuffer(COUNTERS.size * 4);
    const worker = new Worker(join(__dirname, '..', 'webhook-receiver.js'), { workerData: { ...init, counters } satisfies ReceiverInit });
    const port = await new Promise<number>((resolve, reject) => {
      worker.once('message', (m: { port: number }) => resolve(m.port));
      worker.once('error', reject);
    });
    return new Receiver(worker, new Int32Array(counters), port);
  }

  count(which: keyof typeof COUNTERS): number {
    return Atomics.load(this.counters, COUNTERS[which]);
  }

  async setSecret(path: string, secret: string): Promise<void> {
    const ack = new Promise((resolve) => this.worker.once('message', resolve));
    this.worker.postMessage({ type: 'secret', path, secret } satisfies ReceiverMessage);
    await ack;
  }

  async dump(): Promise<Map<string, number>> {
    const reply = new Promise<{ keys: string[]; times: Float64Array }>((resolve) => this.worker.once('message', resolve));
    this.worker.postMessage({ type: 'dump' } satisfies ReceiverMessage);
    const { keys, times } = await reply;
    return new Map(keys.map((k, i) => [k, times[i]]));
  }

  async close(): Promise<void> {
    const exited = new Promise((r) => this.worker.once('exit', r));
    this.worker.postMessage({ type: 'close' } satisfies ReceiverMessage);
    await Promise.race([exited, sleep(2000).then(() => this.worker.terminate())]);
  }
}

interface Produced {
  /** `${path} ${event_id}` → recorded_at (epoch ms) for every delivery expected. */
  expected: Map<string, number>;
  produceMs: number;
  /** Most appends ever in flight at once (a paced run that falls behind shows it here). */
  maxInFlight: number;
}

/**
 * Appends lifecycles for `deliveries` deliveries at `rate` deliveries/s (0: as fast as
 * `concurrency` appenders go), recording each event's recorded_at per endpoint path.
 */
async function produce(store: SqlEventStore, orgId: string, paths: string[], deliveries: number, rate: number, concurrency: number): Promise<Produced> {
  const appends = Math.ceil(deliveries / paths.length / EVENTS_PER_LIFECYCLE);
  const expected = new Map<string, number>();
  let inFlight = 0;
  let maxInFlight = 0;
  let failure: unknown = null;
  const appendOne = async () => {
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    try {
      const l = lifecycle(orgId);
      const result = await store.append(l.stream, l.events, { expectedRevision: 'no_stream' });
      for (const e of result.events) {
        const at = Date.parse(e.recorded_at);
        for (const p of paths) expected.set(`${p} ${e.event_id}`, at);
      }
    } catch (err) {
      failure ??= err;
    } finally {
      inFlight--;
    }
  };
  const started = performance.now();
  const pending = new Set<Promise<void>>();
  const launch = () => {
    const p: Promise<void> = appendOne().finally(() => pending.delete(p));
    pending.add(p);
  };
  if (rate === 0) {
    let next = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < appends && !failure) {
          next++;
          await appendOne();
        }
      }),
    );
  } else {
    const appendsPerMs = rate / paths.length / EVENTS_PER_LIFECYCLE / 1000;
    let launched = 0;
    while (launched < appends && !failure) {
      const due = Math.min(appends, Math.floor((performance.now() - started) * appendsPerMs) + 1);
      while (launched < due) {
        launch();
        launched++;
      }
      await sleep(2);
    }
  }
  await Promise.all(pending);
  if (failure) throw failure;
  return { expected, produceMs: performance.now() - started, maxInFlight };
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
    const workerCount = process.env.BENCH_WORKERS?.trim() === '0' || !process.env.BENCH_WORKERS ? 0 : envInt('BENCH_WORKERS', 1);
    const webhookConcurrency = process.env.WEBHOOK_CONCURRENCY;
    const url = process.env.DATABASE_URL ?? DEFAULT_DATABASE_URL;
    const redisUrl = process.env.REDIS_URL ?? DEFAULT_REDIS_URL;
    const schema = `bench_webhook_${hex(5)}`;
    const prefix = `bench-webhook-${hex(4)}`;
    const admin = new Client({ connectionString: url });
    let receiver: Receiver | null = null;
    const cleanup = async () => {
      await receiver?.close();
      receiver = null;
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
        redis: true,
        schema,
        scopes: ['webhooks:manage'],
        orgName: 'bench-webhook',
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
        const store = api.app.get(SqlEventStore);
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
        const r = await Receiver.start({ publicKeys: keysDocument.keys.filter((k) => k.status !== 'revoked').map((k) => k.public_key), ed25519Every: 50 });
        receiver = r;
        const paths = Array.from({ length: endpointCount }, (_, i) => `/ep${i}`);
        const endpointIds: string[] = [];
        for (const path of paths) {
          const ep = (await call('POST', '/api/cdp/webhooks/endpoints', { url: `http://127.0.0.1:${r.port}${path}`, description: 'bench receiver' })) as { id: string; secret: string };
          endpointIds.push(ep.id);
          await r.setSecret(path, ep.secret);
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

        const waitReceived = async (target: number, label: string): Promise<void> => {
          const deadline = Date.now() + deadlineMs;
          let last = 0;
          while (r.count('unique') < target && Date.now() < deadline) {
            await sleep(20);
            if (Date.now() - last > 2000) {
              last = Date.now();
              log(`webhook ${label}: ${r.count('unique')}/${target} received, ${r.count('duplicates')} duplicates`);
            }
          }
        };

        // Warm-up: connections, prepared statements, JIT; not measured.
        const warm = await produce(store, orgId, paths, warmup, rate, appenders);
        await waitReceived(warm.expected.size, 'warm-up');
        const before = r.count('unique');
        if (before < warm.expected.size) throw new Error(`warm-up: only ${before} of ${warm.expected.size} deliveries arrived within ${deadlineMs} ms`);

        const cpu0 = process.cpuUsage();
        const elu0 = performance.eventLoopUtilization();
        const t0 = performance.now();
        const run = await produce(store, orgId, paths, n, rate, appenders);
        log(`webhook: appended ${run.expected.size / endpointCount} events in ${(run.produceMs / 1000).toFixed(1)} s (${round(run.expected.size / (run.produceMs / 1000), 0)} deliveries/s offered)`);
        await waitReceived(before + run.expected.size, 'run');
        const elapsedMs = performance.now() - t0;
        const cpu = process.cpuUsage(cpu0);
        const elu = performance.eventLoopUtilization(elu0);

        const seen = await r.dump();
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
        const missing = run.expected.size - latencies.length;

        // Delivered means acknowledged and recorded: every attempt is in the store.
        const total = warm.expected.size + run.expected.size;
        const storeDeadline = Date.now() + 30_000;
        let recorded = 0;
        for (;;) {
          [{ n: recorded }] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE status = 'delivered'`);
          if (recorded >= total || Date.now() > storeDeadline) break;
          await sleep(100);
        }
        const badSignatures = r.count('badSignatures');
        const spanS = (lastReceived - firstRecorded) / 1000;
        const result: BenchResult = {
          ...base,
          ops_per_s: latencies.length && spanS > 0 ? round(latencies.length / spanS, 1) : 0,
          p50_ms: round(percentile(sorted, 50), 2),
          p99_ms: round(percentile(sorted, 99), 2),
          errors: missing + badSignatures + Math.max(0, total - recorded - missing),
          offered_per_s: rate || 'unpaced',
          appended_per_s: round(run.expected.size / (run.produceMs / 1000), 1),
          endpoints: endpointCount,
          events: run.expected.size / endpointCount,
          max_ms: round(sorted.length ? sorted[sorted.length - 1] : 0, 2),
          missing,
          bad_signatures: badSignatures,
          duplicates: r.count('duplicates'),
          ed25519_checked: r.count('ed25519Checked'),
          recorded_delivered: recorded,
          warmup_deliveries: warm.expected.size,
          worker_processes: workerCount,
          node_cpu_pct: round(((cpu.user + cpu.system) / 1000 / elapsedMs) * 100, 0),
          // This process's CPU (all threads: service, producer, receiver) per delivery: comparable across runs on a busy machine.
          node_cpu_us_per_delivery: latencies.length ? round((cpu.user + cpu.system) / latencies.length, 0) : 0,
          event_loop_pct: round(elu.utilization * 100, 0),
          elapsed_s: round(elapsedMs / 1000, 2),
          load_at_start: loadAtStart,
        };
        if (missing > 0) result.error = `${missing} deliveries not received within ${deadlineMs} ms of the last append`;
        else if (recorded < total) result.error = `${total - recorded} deliveries not recorded as delivered`;
        else if (badSignatures > 0) result.error = `${badSignatures} requests with a bad signature`;
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
