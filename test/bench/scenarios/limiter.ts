/**
 * `limiter`: what the rate limiter adds to a request. The same authenticated request
 * (GET /api/me: key lookup in PostgreSQL, then the per-key bucket in Redis) runs against two
 * api instances, one with RATE_LIMITS=on and one with it off; the line reports both latencies
 * and the difference. Modes: `redis` (counters in Redis, shared by processes) and `memory`.
 */
import { createHash } from 'node:crypto';
import { AddressInfo } from 'node:net';
import { Client } from 'pg';
import { AccessService } from '@app/access';
import { loadConfig } from '@app/core';
import { createLogger } from '@app/http';
import { createApp } from '../../../apps/api/src/create-app';
import { BenchResult, envInt, errorMessage, failedResult, log, round, runLoad, Scenario, summarize } from '../harness';

const DEFAULT_DB = 'postgres://postgres@127.0.0.1:5432/test';
const DEFAULT_REDIS = 'redis://127.0.0.1:6379';
// The key the test suites use on the same `test` database (test/support/test-kek.ts): the signing
// keys stored there are sealed under it.
const TEST_KEY_ENCRYPTION_KEY = createHash('sha256').update('sigil test key-encryption key').digest('base64');

async function measure(mode: string, limits: 'on' | 'off', n: number, concurrency: number) {
  const schemaDb = process.env.DATABASE_URL ?? DEFAULT_DB;
  const config = loadConfig({
    DATABASE_URL: schemaDb,
    REDIS_URL: mode === 'redis' ? (process.env.REDIS_URL ?? DEFAULT_REDIS) : undefined,
    KEY_ENCRYPTION_KEY: TEST_KEY_ENCRYPTION_KEY,
    RATE_LIMITS: limits,
    RATE_LIMIT_KEY_PER_MINUTE: String(1_000_000_000),
    LOG_LEVEL: 'silent',
    WORKERS: 'off',
  });
  const app = await createApp(config, { logger: createLogger('silent') });
  await app.listen({ port: 0, host: '127.0.0.1' });
  try {
    const { port } = app.getHttpServer().address() as AddressInfo;
    const access = app.get(AccessService);
    const org = await access.createOrganization(`bench-limiter-${limits}`);
    const { key } = await access.createApiKey(org.org_id, { scopes: ['payments:read'], mode: 'test' });
    const url = `http://127.0.0.1:${port}/api/me`;
    const headers = { authorization: `Bearer ${key}` };
    const call = async () => {
      const res = await fetch(url, { headers });
      if (res.status !== 200) throw new Error(`status ${res.status}`);
      await res.arrayBuffer();
    };
    await runLoad({ label: `limiter/${mode}/${limits} warm-up`, operations: Math.min(2000, n), concurrency, worker: () => call, progressMs: 0 });
    return await runLoad({ label: `limiter/${mode}/${limits}`, operations: n, concurrency, worker: () => call });
  } finally {
    await app.close();
  }
}

export const limiterScenario: Scenario = {
  name: 'limiter',
  description: 'latency the rate limiter adds to an authenticated request (RATE_LIMITS on vs off)',
  modes: ['redis', 'memory'],
  async run(mode: string): Promise<BenchResult> {
    const n = envInt('BENCH_N', 20_000);
    const concurrency = envInt('BENCH_CONCURRENCY', 16);
    const base = { bench: 'limiter', mode, n, concurrency };
    try {
      const probe = new Client({ connectionString: process.env.DATABASE_URL ?? DEFAULT_DB });
      await probe.connect();
      await probe.end();
      // Alternate so that neither side always runs on a colder process.
      const half = Math.ceil(n / 2);
      const off1 = await measure(mode, 'off', half, concurrency);
      const on1 = await measure(mode, 'on', half, concurrency);
      const off2 = await measure(mode, 'off', n - half, concurrency);
      const on2 = await measure(mode, 'on', n - half, concurrency);
      const merge = (a: typeof on1, b: typeof on1) => ({
        ...a,
        operations: a.operations + b.operations,
        failedOps: a.failedOps + b.failedOps,
        units: a.units + b.units,
        failedUnits: a.failedUnits + b.failedUnits,
        firstError: a.firstError ?? b.firstError,
        elapsedMs: a.elapsedMs + b.elapsedMs,
        latenciesMs: Float64Array.from([...a.latenciesMs, ...b.latenciesMs]).sort(),
      });
      const on = summarize(base, merge(on1, on2));
      const off = summarize(base, merge(off1, off2));
      log(`limiter/${mode}: on p99 ${on.p99_ms} ms, off p99 ${off.p99_ms} ms`);
      return {
        ...on,
        errors: on.errors + off.errors,
        ops_per_s_without_limits: off.ops_per_s,
        p50_ms_without_limits: off.p50_ms,
        p99_ms_without_limits: off.p99_ms,
        added_p50_ms: round(on.p50_ms - off.p50_ms, 3),
        added_p99_ms: round(on.p99_ms - off.p99_ms, 3),
      };
    } catch (err) {
      return failedResult(base, errorMessage(err));
    }
  },
};
