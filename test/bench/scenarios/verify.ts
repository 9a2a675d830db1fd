/**
 * `verify`: POST /api/verify over HTTP against an api on PostgreSQL and Redis, for one issued
 * certificate. Callers spread over many client IPs (X-Forwarded-For with TRUST_PROXY), as
 * public verification traffic is, so the per-IP limit is counted on every request but not hit.
 */
import { startBenchApi, clientIp } from '../api';
import { BenchResult, envInt, errorMessage, failedResult, runLoad, Scenario, summarize } from '../harness';


export const verifyScenario: Scenario = {
  name: 'verify',
  description: 'POST /api/verify of one certificate over HTTP (postgres + redis)',
  modes: ['postgres'],
  async run(mode: string): Promise<BenchResult> {
    const n = envInt('BENCH_N', 20_000);
    const concurrency = envInt('BENCH_CONCURRENCY', 64);
    const base = { bench: 'verify', mode, n, concurrency };
    try {
      const api = await startBenchApi({ redis: true, env: { TRUST_PROXY: 'true' }, scopes: ['certificates:write'], orgName: 'bench-verify' });
      try {
        const { url, key } = api;
        const issued = await fetch(`${url}/api/notary/create`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ content: JSON.stringify({ bench: 'verify', at: Date.now() }) }),
        });
        const { certificate_id } = (await issued.json()) as { certificate_id: string };
        const body = JSON.stringify({ certificate_id });
        const call = async (op: number) => {
          const res = await fetch(`${url}/api/verify`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-forwarded-for': clientIp(op) },
            body,
          });
          const result = (await res.json()) as { verified?: boolean };
          if (res.status !== 200 || result.verified !== true) throw new Error(`status ${res.status}`);
        };
        await runLoad({ label: 'verify warm-up', operations: Math.min(2000, n), concurrency, worker: () => (op) => call(op + 1_000_000), progressMs: 0 });
        return summarize(base, await runLoad({ label: 'verify/postgres', operations: n, concurrency, worker: () => call }));
      } finally {
        await api.close();
      }
    } catch (err) {
      return failedResult(base, errorMessage(err));
    }
  },
};
