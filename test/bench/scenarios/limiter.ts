/**
 * `limiter`: what the rate limiter adds to a request. The same authenticated request
 * (GET /api/me: key lookup in PostgreSQL, then the per-key bucket in Redis) runs against two
 * api instances, one with RATE_LIMITS=on and one with it off; the line reports both latencies
 * and the difference. Modes: `redis` (counters in Redis, shared by processes) and `memory`.
 */
import { Client } from 'pg';
import { DEFAULT_DATABASE_URL, startBenchApi } from '../api';
import { BenchResult, envInt, errorMessage, failedResult, log, round, runLoad, Scenario, summarize } from '../harness';

async function measure(mode: string, limits: 'on' | 'off', n: number, concurrency: number) {
  const api = await startBenchApi({
    redis: mode === 'redis',
    env: { RATE_LIMITS: limits, RATE_LIMIT_KEY_PER_MINUTE: String(1_000_000_000) },
    scopes: ['payments:read'],
    orgName: `bench-limiter-${limits}`,
  });
  try {
    const { key } = api;
    const url = `${api.url}/api/me`;
    const headers = { authorization: `Bearer ${key}` };
    const call = async () => {
      const res = await fetch(url, { headers });
      if (res.status !== 200) throw new Error(`status ${res.status}`);
      await res.arrayBuffer();
    };
    await runLoad({ label: `limiter/${mode}/${limits} warm-up`, operations: Math.min(2000, n), concurrency, worker: () => call, progressMs: 0 });
    return await runLoad({ label: `limiter/${mode}/${limits}`, operations: n, concurrency, worker: () => call });
  } finally {
    await api.close();
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
      const probe = new Client({ connectionString: process.env.DATABASE_URL ?? DEFAULT_DATABASE_URL });
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
