/**
 * `registry`: GET /v1/registry with a filter and a full-text query over 100,000 entries, over
 * HTTP, 64 concurrent, the load from a separate process (http-load.ts). The entries are inserted
 * straight into the read model of a fresh schema (the projection's table), which is dropped
 * afterwards. The line is the repeated query (the registry unchanged: answers kept per version).
 * Then `cold_*`: a run where every request is a listing not asked before (a filter of its own:
 * it counts its exact total and finds its page), and `pages_*`: new pages (cursors) of the
 * measured listing, whose total is already counted.
 */
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { DEFAULT_DATABASE_URL, startBenchApi } from '../api';
import { ApiProcesses, startMoreApis } from '../api-processes';
import { BenchResult, envInt, errorMessage, failedResult, log, percentile, round, Scenario, summarize } from '../harness';
import { httpLoadFields, HttpLoadSpec, runHttpLoad } from '../http-load';

const WORDS = ['rain', 'solar', 'credit', 'retail', 'genome', 'traffic', 'energy', 'fraud', 'churn', 'vision', 'speech', 'forecast', 'sensor', 'market', 'claims', 'ledger'];
const INDUSTRIES = ['climate', 'finance', 'health', 'retail', 'transport', 'energy'];

export const registryScenario: Scenario = {
  name: 'registry',
  description: 'GET /v1/registry, filtered and searched, over 100,000 entries (postgres)',
  modes: ['postgres'],
  async run(mode: string): Promise<BenchResult> {
    const n = envInt('BENCH_N', 20_000);
    const concurrency = envInt('BENCH_CONCURRENCY', 64);
    const entries = envInt('BENCH_ENTRIES', 100_000);
    const base = { bench: 'registry', mode, n, concurrency };
    const url = process.env.DATABASE_URL ?? DEFAULT_DATABASE_URL;
    const schema = `bench_registry_${randomBytes(5).toString('hex')}`;
    const admin = new Client({ connectionString: url });
    try {
      await admin.connect();
      await admin.query(`CREATE SCHEMA ${schema}`);
      const api = await startBenchApi({ redis: true, env: { TRUST_PROXY: 'true' }, scopes: ['certificates:write'], orgName: 'bench-registry', schema });
      let more: ApiProcesses | undefined;
      try {
        more = await startMoreApis({ schema, env: { TRUST_PROXY: 'true' } });
        log(`registry: inserting ${entries} entries into ${schema}`);
        await admin.query(`SET search_path = ${schema}`);
        await admin.query(
          `INSERT INTO registry_entries (id, org_id, slug, title, summary, artifact_type, status, certificate_id, artifact_hash, rows_count,
                                         industry, tags, visibility, created_at, updated_at)
           SELECT gen_random_uuid()::text, 'org_bench', 'entry-' || i,
                  initcap(w1) || ' ' || w2 || ' dataset ' || i,
                  'A ' || w2 || ' collection about ' || w1,
                  (ARRAY['dataset','model','system','output'])[1 + i % 4],
                  CASE WHEN i % 5 = 0 THEN 'unverified' ELSE 'certified' END,
                  NULL, NULL, i % 1000,
                  ($2::text[])[1 + i % 6],
                  ARRAY[w1, w2],
                  CASE WHEN i % 10 = 0 THEN 'private' ELSE 'public' END,
                  now() - (i || ' seconds')::interval, now()
           FROM (SELECT i, ($1::text[])[1 + (i * 7) % 16] AS w1, ($1::text[])[1 + (i * 13) % 16] AS w2 FROM generate_series(1, $3::int) AS i) s`,
          [WORDS, INDUSTRIES, entries],
        );
        await admin.query('VACUUM (ANALYZE) registry_entries');
        // Matches about 800 of the 100,000 (i ≡ 7 mod 16, i mod 6 = 5, public, certified, output).
        const path = '/v1/registry?q=solar%20forecast&industry=energy&status=certified&artifact_type=output&limit=50';
        const check = await fetch(`${api.url}${path}`, { headers: { 'x-forwarded-for': '10.0.0.1' } });
        const body = (await check.json()) as { total: number };
        log(`registry: ${path} matches ${body.total} entries`);
        const spec: HttpLoadSpec = {
          url: api.url,
          method: 'GET',
          path,
          headers: { 'x-forwarded-for': '{ip}' },
          expectStatus: 200,
          operations: n,
          concurrency,
          label: 'registry/postgres',
          urls: more.urls,
        };
        await runHttpLoad({ ...spec, label: 'registry warm-up', operations: Math.min(1000, n), opOffset: 5_000_000, progressMs: 0 });
        const load = await runHttpLoad(spec, more.pids);
        const result = { ...summarize(base, load), ...httpLoadFields(load) };
        const coldN = Math.min(2000, n);
        // Listings not asked before: a filter of its own per request (two words, an industry, an
        // artifact type), so each one counts its total and finds its page.
        const filters: string[] = [];
        for (let a = 0; a < WORDS.length && filters.length < coldN; a++)
          for (let b = 0; b < WORDS.length && filters.length < coldN; b++)
            for (const industry of INDUSTRIES)
              for (const type of ['dataset', 'model', 'system', 'output'])
                if (a !== b && filters.length < coldN) filters.push(`/v1/registry?q=${WORDS[a]}%20${WORDS[b]}&industry=${industry}&status=certified&artifact_type=${type}&limit=50`);
        const cold = await runHttpLoad({ ...spec, paths: filters, operations: coldN, opOffset: 7_000_000, label: 'registry cold listings' }, more.pids);
        // Pages of the measured listing not asked before: a cursor per request, one second apart on
        // the entries' clock (each finds its page; the total is the one already counted).
        const [{ newest }] = (await admin.query('SELECT max(created_at) AS newest FROM registry_entries')).rows as { newest: Date }[];
        const pages = Array.from({ length: coldN }, (_, i) => {
          const cursor = Buffer.from(JSON.stringify([new Date(newest.getTime() - (i + 1) * 1000).toISOString(), 'z'])).toString('base64url');
          return `${path}&cursor=${cursor}`;
        });
        const paged = await runHttpLoad({ ...spec, paths: pages, operations: coldN, opOffset: 8_000_000, label: 'registry new pages' }, more.pids);
        const failed = cold.failedOps + paged.failedOps;
        return {
          ...result,
          entries,
          matching: body.total,
          cold_n: coldN,
          cold_ops_per_s: round((cold.units / cold.elapsedMs) * 1000, 1),
          cold_p50_ms: round(percentile(cold.latenciesMs, 50), 2),
          cold_p99_ms: round(percentile(cold.latenciesMs, 99), 2),
          cold_api_cpu_us_per_op: httpLoadFields(cold).api_cpu_us_per_op,
          cold_postgres_cpu_us_per_op: httpLoadFields(cold).postgres_cpu_us_per_op,
          pages_ops_per_s: round((paged.units / paged.elapsedMs) * 1000, 1),
          pages_p50_ms: round(percentile(paged.latenciesMs, 50), 2),
          pages_p99_ms: round(percentile(paged.latenciesMs, 99), 2),
          pages_api_cpu_us_per_op: httpLoadFields(paged).api_cpu_us_per_op,
          pages_postgres_cpu_us_per_op: httpLoadFields(paged).postgres_cpu_us_per_op,
          ...(failed ? { errors: result.errors + failed, error: result.error ?? cold.firstError ?? paged.firstError } : {}),
        };
      } finally {
        await more?.close();
        await api.close();
      }
    } catch (err) {
      return failedResult(base, errorMessage(err));
    } finally {
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
      await admin.end().catch(() => undefined);
    }
  },
};
