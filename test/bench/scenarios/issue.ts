/**
 * `issue`: POST /api/notary/create over HTTP against an api on PostgreSQL and Redis, 64
 * concurrent. Issuance is serialized per organization (the paywall count), so each client
 * worker is its own organization with bought credits, as many customers would be.
 */
import { AccessService } from '@app/access';
import { CreditsService } from '@app/notary';
import { startBenchApi, clientIp } from '../api';
import { BenchResult, envInt, errorMessage, failedResult, runLoad, Scenario, summarize } from '../harness';

export const issueScenario: Scenario = {
  name: 'issue',
  description: 'POST /api/notary/create over HTTP, one organization per client (postgres + redis)',
  modes: ['postgres'],
  async run(mode: string): Promise<BenchResult> {
    const n = envInt('BENCH_N', 20_000);
    const concurrency = envInt('BENCH_CONCURRENCY', 64);
    const base = { bench: 'issue', mode, n, concurrency };
    try {
      const api = await startBenchApi({ redis: true, env: { TRUST_PROXY: 'true' }, scopes: ['certificates:write'], orgName: 'bench-issue' });
      try {
        const access = api.app.get(AccessService);
        const credits = api.app.get(CreditsService);
        const perWorker = Math.ceil((n + 2000) / concurrency) + 1;
        const keys: string[] = [];
        for (let w = 0; w < concurrency; w++) {
          const org = await access.createOrganization(`bench-issue-${w}`);
          await credits.checkout(org.org_id, Math.min(10_000, perWorker));
          keys.push((await access.createApiKey(org.org_id, { scopes: ['certificates:write'], mode: 'test' })).key);
        }
        const worker = (w: number) => async (op: number) => {
          const res = await fetch(`${api.url}/api/notary/create`, {
            method: 'POST',
            headers: { authorization: `Bearer ${keys[w]}`, 'content-type': 'application/json', 'x-forwarded-for': clientIp(op) },
            body: JSON.stringify({ content: JSON.stringify({ prediction: op, score: op / 7, label: `item-${op}` }), filename: `item-${op}.json` }),
          });
          if (res.status !== 200) throw new Error(`status ${res.status}: ${await res.text()}`);
          await res.arrayBuffer();
        };
        await runLoad({ label: 'issue warm-up', operations: Math.min(2000, n), concurrency, worker, progressMs: 0 });
        return summarize(base, await runLoad({ label: 'issue/postgres', operations: n, concurrency, worker }));
      } finally {
        await api.close();
      }
    } catch (err) {
      return failedResult(base, errorMessage(err));
    }
  },
};
