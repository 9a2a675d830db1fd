/**
 * `verify`: POST /api/verify over HTTP against an api on PostgreSQL and Redis, for one issued
 * certificate. Callers spread over many client IPs (X-Forwarded-For with TRUST_PROXY), as
 * public verification traffic is, so the per-IP limit is counted on every request but not hit.
 */
import { createHash } from 'node:crypto';
import { AddressInfo } from 'node:net';
import { AccessService } from '@app/access';
import { loadConfig } from '@app/core';
import { createLogger } from '@app/http';
import { createApp } from '../../../apps/api/src/create-app';
import { BenchResult, envInt, errorMessage, failedResult, runLoad, Scenario, summarize } from '../harness';

// The key the test suites seal their signing keys under in the shared `test` database.
const TEST_KEY_ENCRYPTION_KEY = createHash('sha256').update('sigil test key-encryption key').digest('base64');

export const verifyScenario: Scenario = {
  name: 'verify',
  description: 'POST /api/verify of one certificate over HTTP (postgres + redis)',
  modes: ['postgres'],
  async run(mode: string): Promise<BenchResult> {
    const n = envInt('BENCH_N', 20_000);
    const concurrency = envInt('BENCH_CONCURRENCY', 64);
    const base = { bench: 'verify', mode, n, concurrency };
    try {
      const config = loadConfig({
        DATABASE_URL: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
        REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
        KEY_ENCRYPTION_KEY: process.env.KEY_ENCRYPTION_KEY ?? TEST_KEY_ENCRYPTION_KEY,
        TRUST_PROXY: 'true',
        LOG_LEVEL: 'silent',
        WORKERS: 'off',
      });
      const app = await createApp(config, { logger: createLogger('silent') });
      await app.listen({ port: 0, host: '127.0.0.1' });
      try {
        const { port } = app.getHttpServer().address() as AddressInfo;
        const access = app.get(AccessService);
        const org = await access.createOrganization('bench-verify');
        const { key } = await access.createApiKey(org.org_id, { scopes: ['certificates:write'], mode: 'test' });
        const url = `http://127.0.0.1:${port}`;
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
            headers: { 'content-type': 'application/json', 'x-forwarded-for': `10.${(op >> 16) & 255}.${(op >> 8) & 255}.${op & 255}` },
            body,
          });
          const result = (await res.json()) as { verified?: boolean };
          if (res.status !== 200 || result.verified !== true) throw new Error(`status ${res.status}`);
        };
        await runLoad({ label: 'verify warm-up', operations: Math.min(2000, n), concurrency, worker: () => (op) => call(op + 1_000_000), progressMs: 0 });
        return summarize(base, await runLoad({ label: 'verify/postgres', operations: n, concurrency, worker: () => call }));
      } finally {
        await app.close();
      }
    } catch (err) {
      return failedResult(base, errorMessage(err));
    }
  },
};
