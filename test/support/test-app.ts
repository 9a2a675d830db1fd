import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Type } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { AppConfig, loadConfig } from '@app/core';
import { createLogger } from '@app/http';
import { createApp, CreateAppOptions } from '../../apps/api/src/create-app';
import { TEST_KEY_ENCRYPTION_KEY } from './test-kek';

/**
 * Starts the real app for e2e tests: embedded PGlite in a temp dir, or PostgreSQL and Redis
 * when DATABASE_URL / REDIS_URL are set (as `.ci/run`'s second `npm test` does).
 */
export interface TestApp {
  app: NestFastifyApplication;
  config: AppConfig;
  close(): Promise<void>;
}

export async function startTestApp(env: Record<string, string> = {}, imports: Type[] = [], options: Pick<CreateAppOptions, 'settlementProvider' | 'logger'> = {}): Promise<TestApp> {
  const dataDir = mkdtempSync(join(tmpdir(), 'sigil-e2e-'));
  const config = loadConfig({
    DATABASE_URL: process.env.DATABASE_URL,
    REDIS_URL: process.env.REDIS_URL,
    KEY_ENCRYPTION_KEY: TEST_KEY_ENCRYPTION_KEY,
    DATA_DIR: dataDir,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    ...env,
  });
  const app = await createApp(config, { logger: createLogger(config.LOG_LEVEL), imports, ...options });
  await app.getHttpAdapter().getInstance().ready();
  return {
    app,
    config,
    async close() {
      await app.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
