import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NestFactory } from '@nestjs/core';
import type { INestApplicationContext } from '@nestjs/common';
import { loadConfig } from '@app/core';
import { createLogger } from '@app/http';
import { MetricsServer } from '@app/metrics';
import { WorkerModule } from '../apps/worker/src/worker.module';
import { isolatedEnv } from './support/isolated-env';
import { parsePrometheus, samplesOf } from './support/prometheus-text';
import { TEST_KEY_ENCRYPTION_KEY } from './support/test-kek';

const TOKEN = 'worker-metrics-token-0123456789';

/** The worker has no HTTP API: its metrics are on METRICS_PORT alone, behind METRICS_TOKEN when set. */
describe('GET /metrics of the worker, on METRICS_PORT (e2e)', () => {
  let app: INestApplicationContext;
  let base: string;
  let dispose: () => Promise<void>;

  beforeAll(async () => {
    const iso = await isolatedEnv();
    const dataDir = mkdtempSync(join(tmpdir(), 'sigil-worker-metrics-'));
    const config = loadConfig({
      DATABASE_URL: process.env.DATABASE_URL,
      REDIS_URL: process.env.REDIS_URL,
      ...iso.env,
      KEY_ENCRYPTION_KEY: TEST_KEY_ENCRYPTION_KEY,
      DATA_DIR: dataDir,
      LOG_LEVEL: 'silent',
      HOST: '127.0.0.1',
      METRICS_PORT: '0',
      METRICS_TOKEN: TOKEN,
    });
    const logger = createLogger(config.LOG_LEVEL, 'sigil-worker');
    app = await NestFactory.createApplicationContext(WorkerModule.forRoot(config, logger), { logger: false });
    await app.init();
    base = `http://127.0.0.1:${app.get(MetricsServer).port}`;
    dispose = async () => {
      await app.close();
      rmSync(dataDir, { recursive: true, force: true });
      await iso.dispose();
    };
  }, 60_000);
  afterAll(() => dispose?.());

  it('serves the worker registry: backlog, projection lag, the store; no HTTP request metrics', async () => {
    const res = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.status).toBe(200);
    const samples = parsePrometheus(await res.text());
    expect(samplesOf(samples, 'sigil_webhook_queue_depth', { state: 'due' })).toHaveLength(1);
    expect(samplesOf(samples, 'sigil_webhook_endpoints_disabled')).toHaveLength(1);
    // The worker runs the registry read model and the webhook fan-out, both checkpointed.
    expect(samplesOf(samples, 'sigil_projection_lag_events').map((s) => s.labels.projection)).toEqual(expect.arrayContaining(['registry']));
    expect(samplesOf(samples, 'sigil_http_request_duration_seconds_count')).toEqual([]);
    expect(samplesOf(samples, 'sigil_db_pool_connections')).toHaveLength(process.env.DATABASE_URL ? 1 : 0);
    expect(samplesOf(samples, 'process_resident_memory_bytes')).toHaveLength(1);
  });

  it('refuses a scrape without the token or with another one', async () => {
    for (const headers of [{}, { authorization: 'Bearer worker-metrics-token-wrong' }] as Record<string, string>[]) {
      const res = await fetch(`${base}/metrics`, { headers });
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ ok: false, error: 'auth_required', message: expect.any(String), retryable: false });
    }
  });
});
