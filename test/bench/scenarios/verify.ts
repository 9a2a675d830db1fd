/**
 * `verify`: POST /api/verify over HTTP against an api on PostgreSQL and Redis, for one issued
 * certificate. Callers spread over many client IPs (X-Forwarded-For with TRUST_PROXY), as
 * public verification traffic is, so the per-IP limit is counted on every request but not hit.
 * The load comes from a separate process (http-load.ts).
 */
import { startBenchApi } from '../api';
import { ApiProcesses, startMoreApis } from '../api-processes';
import { withBenchSchema } from '../bench-schema';
import { BenchResult, envInt, errorMessage, failedResult, Scenario, summarize } from '../harness';
import { httpLoadFields, HttpLoadSpec, runHttpLoad } from '../http-load';

export const verifyScenario: Scenario = {
  name: 'verify',
  description: 'POST /api/verify of one certificate over HTTP (postgres + redis)',
  modes: ['postgres'],
  async run(mode: string): Promise<BenchResult> {
    const n = envInt('BENCH_N', 20_000);
    const concurrency = envInt('BENCH_CONCURRENCY', 64);
    const base = { bench: 'verify', mode, n, concurrency };
    try {
      return await withBenchSchema('bench_verify', async (schema) => {
        const api = await startBenchApi({ redis: true, env: { TRUST_PROXY: 'true' }, scopes: ['certificates:write'], orgName: 'bench-verify', schema });
        let more: ApiProcesses | undefined;
        try {
          more = await startMoreApis({ schema, env: { TRUST_PROXY: 'true' } });
          const { url, key } = api;
          const issued = await fetch(`${url}/api/notary/create`, {
            method: 'POST',
            headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
            body: JSON.stringify({ content: JSON.stringify({ bench: 'verify', at: Date.now() }) }),
          });
          const { certificate_id } = (await issued.json()) as { certificate_id: string };
          const spec: HttpLoadSpec = {
            url,
            method: 'POST',
            path: '/api/verify',
            headers: { 'content-type': 'application/json', 'x-forwarded-for': '{ip}' },
            body: JSON.stringify({ certificate_id }),
            expectStatus: 200,
            expectBody: '"verified":true',
            operations: n,
            concurrency,
            label: 'verify/postgres',
            urls: more.urls,
          };
          await runHttpLoad({ ...spec, label: 'verify warm-up', operations: Math.min(2000, n), opOffset: 1_000_000, progressMs: 0 });
          const load = await runHttpLoad(spec, more.pids);
          return { ...summarize(base, load), ...httpLoadFields(load) };
        } finally {
          await more?.close();
          await api.close();
        }
      });
    } catch (err) {
      return failedResult(base, errorMessage(err));
    }
  },
};
