/**
 * `registry`: GET /v1/registry with a filter and a full-text query over 100,000 entries, over
 * HTTP, 64 concurrent. The entries are inserted straight into the read model of a fresh schema
 * (the projection's table), which is dropped afterwards.
 */
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { DEFAULT_DATABASE_URL, startBenchApi, clientIp } from '../api';
import { BenchResult, envInt, errorMessage, failedResult, log, runLoad, Scenario, summarize } from '../harness';

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
      try {
        log(`registry: inserting ${entries} entries into ${schema}`);
        await admin.query(`SET search_path = ${schema}`);
        await admin.query(
          `INSERT INTO registry_entries (id, org_id, slug, title, summary, artifact_type, status, certificate_id, artifact_hash, rows_count,
                                         industry, tags, visibility, created_at, updated_at, search)
           SELECT gen_random_uuid()::text, 'org_bench', 'entry-' || i,
                  initcap(w1) || ' ' || w2 || ' dataset ' || i,
                  'A ' || w2 || ' collection about ' || w1,
                  (ARRAY['dataset','model','system','output'])[1 + i % 4],
                  CASE WHEN i % 5 = 0 THEN 'unverified' ELSE 'certified' END,
                  NULL, NULL, i % 1000,
                  ($2::text[])[1 + i % 6],
                  ARRAY[w1, w2],
                  CASE WHEN i % 10 = 0 THEN 'private' ELSE 'public' END,
                  now() - (i || ' seconds')::interval, now(),
                  to_tsvector('simple', initcap(w1) || ' ' || w2 || ' dataset ' || i || ' A ' || w2 || ' collection about ' || w1 || ' ' || w1 || ' ' || w2)
           FROM (SELECT i, ($1::text[])[1 + (i * 7) % 16] AS w1, ($1::text[])[1 + (i * 13) % 16] AS w2 FROM generate_series(1, $3::int) AS i) s`,
          [WORDS, INDUSTRIES, entries],
        );
        await admin.query('ANALYZE registry_entries');
        // Matches about 800 of the 100,000 (i ≡ 7 mod 16, i mod 6 = 5, public, certified, output).
        const path = '/v1/registry?q=solar%20forecast&industry=energy&status=certified&artifact_type=output&limit=50';
        const check = await fetch(`${api.url}${path}`, { headers: { 'x-forwarded-for': '10.0.0.1' } });
        const body = (await check.json()) as { total: number };
        log(`registry: ${path} matches ${body.total} entries`);
        const call = async (op: number) => {
          const res = await fetch(`${api.url}${path}`, { headers: { 'x-forwarded-for': clientIp(op) } });
          if (res.status !== 200) throw new Error(`status ${res.status}`);
          await res.arrayBuffer();
        };
        await runLoad({ label: 'registry warm-up', operations: Math.min(1000, n), concurrency, worker: () => (op) => call(op + 5_000_000), progressMs: 0 });
        const result = summarize(base, await runLoad({ label: 'registry/postgres', operations: n, concurrency, worker: () => call }));
        return { ...result, entries, matching: body.total };
      } finally {
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
