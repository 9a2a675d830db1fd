/**
 * `limiter`: what the rate limiter adds to a request. The same authenticated request (GET /api/me:
 * the key looked up in PostgreSQL, then the per-key bucket counted in Redis or in memory) is sent
 * to two apis in this process, one with RATE_LIMITS=on and one with it off, from the separate
 * load-generator process (http-load.ts) at a steady offered rate (an open loop, BENCH_RATE, 1,000
 * requests/s by default: a latency is counted from when its request was due). The runs alternate
 * off, on, off, on, … (BENCH_ROUNDS pairs) so that neither side always runs on a colder machine.
 *
 * The line: the contract fields of the limited runs, and beside them the unlimited runs' figures
 * and the differences (`added_p50_ms`, `added_p99_ms`: the latency the limiter adds to a request
 * at that rate), with the api's CPU per request both ways (`added_api_cpu_us_per_op`: what the
 * limiter costs the api, which is what it takes from throughput at saturation). Modes: `redis`
 * (counters in Redis, shared by processes) and `memory`.
 *
 * Until 2026-11-27 the load was `fetch` in the api's own process at 16 concurrent requests as fast
 * as they went: the api was saturated, so the difference of the two p99s measured CPU queueing
 * (and the load generator's own cost) rather than the latency a request sees.
 */
import { Client } from 'pg';
import { BenchApi, DEFAULT_DATABASE_URL, startBenchApi } from '../api';
import { BenchResult, envInt, errorMessage, failedResult, LoadResult, log, percentile, round, Scenario, summarize } from '../harness';
import { HttpLoadResult, HttpLoadSpec, runHttpLoad } from '../http-load';

const start = (mode: string, limits: 'on' | 'off'): Promise<BenchApi> =>
  startBenchApi({
    redis: mode === 'redis',
    env: { RATE_LIMITS: limits, RATE_LIMIT_KEY_PER_MINUTE: String(1_000_000_000) },
    scopes: ['payments:read'],
    orgName: `bench-limiter-${limits}`,
  });

const spec = (api: BenchApi, label: string, operations: number, concurrency: number, rate: number, opOffset: number): HttpLoadSpec => ({
  url: api.url,
  method: 'GET',
  path: '/api/me',
  headers: { authorization: `Bearer ${api.key}` },
  expectStatus: 200,
  operations,
  concurrency,
  ratePerS: rate,
  opOffset,
  label,
  progressMs: 0,
});

/** The runs of one side as one: latencies pooled, CPU and time added up. */
function pooled(runs: HttpLoadResult[]): LoadResult & { cpuUs: number } {
  const latencies = Float64Array.from(runs.flatMap((r) => Array.from(r.latenciesMs))).sort();
  return {
    operations: runs.reduce((s, r) => s + r.operations, 0),
    failedOps: runs.reduce((s, r) => s + r.failedOps, 0),
    units: runs.reduce((s, r) => s + r.units, 0),
    failedUnits: runs.reduce((s, r) => s + r.failedUnits, 0),
    firstError: runs.find((r) => r.firstError)?.firstError,
    elapsedMs: runs.reduce((s, r) => s + r.elapsedMs, 0),
    latenciesMs: latencies,
    nodeCpuPct: 0,
    eventLoopPct: 0,
    // The api's CPU over each run: its share of one core times the run's length.
    cpuUs: runs.reduce((s, r) => s + (r.allApisCpuPct / 100) * r.elapsedMs * 1000, 0),
  };
}

export const limiterScenario: Scenario = {
  name: 'limiter',
  description: 'latency the rate limiter adds to an authenticated request (RATE_LIMITS on vs off), at a steady offered rate',
  modes: ['redis', 'memory'],
  async run(mode: string): Promise<BenchResult> {
    const n = envInt('BENCH_N', 20_000);
    const concurrency = envInt('BENCH_CONCURRENCY', 64);
    const rate = envInt('BENCH_RATE', 1_000);
    const rounds = envInt('BENCH_ROUNDS', 4);
    const base = { bench: 'limiter', mode, n, concurrency };
    try {
      const probe = new Client({ connectionString: process.env.DATABASE_URL ?? DEFAULT_DATABASE_URL });
      await probe.connect();
      await probe.end();
      const off = await start(mode, 'off');
      try {
        const on = await start(mode, 'on');
        try {
          for (const api of [off, on]) await runHttpLoad(spec(api, `limiter/${mode} warm-up`, Math.min(2000, n), concurrency, rate, 9_000_000));
          const per = Math.max(1, Math.floor(n / (2 * rounds)));
          const runs: Record<'on' | 'off', HttpLoadResult[]> = { on: [], off: [] };
          for (let i = 0; i < rounds; i++) {
            for (const [side, api] of [['off', off], ['on', on]] as const) {
              runs[side].push(await runHttpLoad(spec(api, `limiter/${mode}/${side}`, per, concurrency, rate, i * per)));
            }
          }
          const limited = pooled(runs.on);
          const unlimited = pooled(runs.off);
          const withLimits = summarize(base, limited);
          const without = summarize(base, unlimited);
          const cpuPerOp = (p: { cpuUs: number; latenciesMs: Float64Array }) => p.cpuUs / Math.max(1, p.latenciesMs.length);
          log(`limiter/${mode}: on p99 ${withLimits.p99_ms} ms, off p99 ${without.p99_ms} ms`);
          return {
            ...withLimits,
            offered_per_s: rate,
            errors: withLimits.errors + without.errors,
            ops_per_s_without_limits: without.ops_per_s,
            p50_ms_without_limits: without.p50_ms,
            p99_ms_without_limits: without.p99_ms,
            added_p50_ms: round(percentile(limited.latenciesMs, 50) - percentile(unlimited.latenciesMs, 50), 3),
            added_p99_ms: round(percentile(limited.latenciesMs, 99) - percentile(unlimited.latenciesMs, 99), 3),
            api_cpu_us_per_op: round(cpuPerOp(limited), 0),
            api_cpu_us_per_op_without_limits: round(cpuPerOp(unlimited), 0),
            added_api_cpu_us_per_op: round(cpuPerOp(limited) - cpuPerOp(unlimited), 0),
            rounds,
          };
        } finally {
          await on.close();
        }
      } finally {
        await off.close();
      }
    } catch (err) {
      return failedResult(base, errorMessage(err));
    }
  },
};
