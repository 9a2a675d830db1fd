/**
 * `issue`: POST /api/notary/create over HTTP against an api on PostgreSQL and Redis, 64
 * concurrent, the load from a separate process (http-load.ts). Issuance is serialized per
 * organization (the paywall), so each client is its own organization with bought credits, as
 * many customers would be; each request comes from its own client IP (the per-IP issuance limit
 * is counted, never hit).
 */
import { AccessService } from '@app/access';
import { CreditsService } from '@app/notary';
import { startBenchApi } from '../api';
import { ApiProcesses, startMoreApis } from '../api-processes';
import { withBenchSchema } from '../bench-schema';
import { BenchResult, envInt, errorMessage, failedResult, Scenario, summarize } from '../harness';
import { httpLoadFields, HttpLoadSpec, runHttpLoad } from '../http-load';

export const issueScenario: Scenario = {
  name: 'issue',
  description: 'POST /api/notary/create over HTTP, one organization per client (postgres + redis)',
  modes: ['postgres'],
  async run(mode: string): Promise<BenchResult> {
    const n = envInt('BENCH_N', 20_000);
    const concurrency = envInt('BENCH_CONCURRENCY', 64);
    const base = { bench: 'issue', mode, n, concurrency };
    try {
      return await withBenchSchema('bench_issue', async (schema) => {
        const api = await startBenchApi({ redis: true, env: { TRUST_PROXY: 'true' }, scopes: ['certificates:write'], orgName: 'bench-issue', schema });
        let more: ApiProcesses | undefined;
        try {
          more = await startMoreApis({ schema, env: { TRUST_PROXY: 'true' } });
          const access = api.app.get(AccessService);
          const credits = api.app.get(CreditsService);
          const warmup = Math.min(2000, n);
          // Clients pull operations from one counter, so one may do more than its share.
          const perClient = Math.min(10_000, 2 * Math.ceil((n + warmup) / concurrency) + 10);
          const clientHeaders: Record<string, string>[] = [];
          for (let w = 0; w < concurrency; w++) {
            const org = await access.createOrganization(`bench-issue-${w}`);
            await credits.checkout(org.org_id, perClient);
            clientHeaders.push({ authorization: `Bearer ${(await access.createApiKey(org.org_id, { scopes: ['certificates:write'], mode: 'test' })).key}` });
          }
          const spec: HttpLoadSpec = {
            url: api.url,
            method: 'POST',
            path: '/api/notary/create',
            headers: { 'content-type': 'application/json', 'x-forwarded-for': '{ip}' },
            clientHeaders,
            // Distinct JSON content per operation: {"prediction":op,"label":"item-op"}.
            body: JSON.stringify({ content: JSON.stringify({ prediction: 0, label: 'item-0' }).replace(/0/g, '{op}'), filename: 'item-{op}.json' }),
            expectStatus: 200,
            operations: n,
            concurrency,
            label: 'issue/postgres',
            urls: more.urls,
          };
          await runHttpLoad({ ...spec, label: 'issue warm-up', operations: warmup, opOffset: 1_000_000, progressMs: 0 });
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
