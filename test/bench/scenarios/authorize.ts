/**
 * `authorize`: POST /api/cdp/authorize over HTTP against an api on PostgreSQL and Redis, 64
 * concurrent, on the auto-authorized path: one organization whose policy sets per-transaction
 * limits, a review threshold the requests stay under, merchant and purpose rules; every request
 * carries its own Idempotency-Key, as the SDK sends. With BENCH_SPEND_CAP=1 the policy also has a
 * daily spend cap (every decision then reserves on that cap's row, each in its own append, and the
 * row's CHECK serializes them: a cap cannot be overshot). The load comes from a separate process
 * (http-load.ts). Like issue and verify, it runs in a fresh schema, dropped afterwards, so its
 * figures do not depend on what earlier runs and test suites left in the shared database.
 */
import { startBenchApi } from '../api';
import { ApiProcesses, startMoreApis } from '../api-processes';
import { withBenchSchema } from '../bench-schema';
import { BenchResult, envInt, errorMessage, failedResult, Scenario, summarize } from '../harness';
import { httpLoadFields, HttpLoadSpec, runHttpLoad } from '../http-load';

export const authorizeScenario: Scenario = {
  name: 'authorize',
  description: 'POST /api/cdp/authorize over HTTP, auto-authorized path, one organization (postgres + redis)',
  modes: ['postgres'],
  async run(mode: string): Promise<BenchResult> {
    const n = envInt('BENCH_N', 20_000);
    const concurrency = envInt('BENCH_CONCURRENCY', 64);
    const withCap = process.env.BENCH_SPEND_CAP === '1';
    const withKey = process.env.BENCH_NO_IDEMPOTENCY !== '1';
    // BENCH_RATE=r offers r requests/s (an open loop, latency from when each was due); 0: closed loop.
    const rate = envInt('BENCH_RATE', 0);
    const base = { bench: withCap ? 'authorize+spend_cap' : 'authorize', mode, n, concurrency };
    try {
      return await withBenchSchema('bench_authorize', async (schema) => {
        const api = await startBenchApi({
          redis: true,
          env: { TRUST_PROXY: 'true', RATE_LIMIT_KEY_PER_MINUTE: '100000000' },
          scopes: ['payments:write', 'payments:read'],
          orgName: 'bench-authorize',
          schema,
        });
        let more: ApiProcesses | undefined;
        try {
          // BENCH_API_PROCESSES=n: n-1 more api processes on the same schema share the load.
          more = await startMoreApis({ schema, env: { TRUST_PROXY: 'true', RATE_LIMIT_KEY_PER_MINUTE: '100000000' } });
          const policy = {
            limits: { USD: { per_transaction_cents: 50_000, review_above_cents: 20_000 } },
            merchants: { blocked: ['m_bad'], allowed: null },
            purposes: { permitted: ['travel', 'software'] },
            ...(withCap ? { spend_caps: [{ window: 'daily', currency: 'USD', amount_cents: 1_000_000_000_000 }] } : {}),
          };
          const put = await fetch(`${api.url}/api/cdp/policies/default`, {
            method: 'PUT',
            headers: { authorization: `Bearer ${api.key}`, 'content-type': 'application/json' },
            body: JSON.stringify(policy),
          });
          if (put.status !== 200) throw new Error(`policy: status ${put.status}: ${await put.text()}`);
          const expires = new Date(Date.now() + 24 * 3600_000).toISOString();
          const run = `${Date.now().toString(36)}`;
          const spec: HttpLoadSpec = {
            url: api.url,
            method: 'POST',
            path: '/api/cdp/authorize',
            headers: {
              authorization: `Bearer ${api.key}`,
              'content-type': 'application/json',
              'x-forwarded-for': '{ip}',
              ...(withKey ? { 'idempotency-key': `bench-${run}-{op}` } : {}),
            },
            body: `{"amount_cents":1500,"currency":"USD","merchant_id":"m_{op}","purpose_tag":"software","expiration_iso":"${expires}"}`,
            expectStatus: 200,
            expectBody: '"decision":"authorized"',
            operations: n,
            concurrency,
            label: `authorize/${mode}`,
            urls: more.urls,
            ...(rate ? { ratePerS: rate } : {}),
          };
          await runHttpLoad({ ...spec, label: 'authorize warm-up', operations: Math.min(2000, n), opOffset: 10_000_000, progressMs: 0 });
          const load = await runHttpLoad(spec, more.pids);
          return { ...summarize(base, load), ...(rate ? { offered_per_s: rate } : {}), ...httpLoadFields(load) };
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
