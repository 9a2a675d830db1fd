/**
 * Starts the real api in this process, listening on a free loopback port, on PostgreSQL (and
 * Redis when asked), with an organization and a key ready: what the HTTP scenarios share.
 */
import { createHash } from 'node:crypto';
import { AddressInfo } from 'node:net';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { AccessService, Scope } from '@app/access';
import { loadConfig } from '@app/core';
import { createLogger } from '@app/http';
import { createApp } from '../../apps/api/src/create-app';

export const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/test';
export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

// The key the test suites seal their signing keys under in the shared `test` database
// (test/support/test-kek.ts), so the bench can open the keys they left there.
const TEST_KEY_ENCRYPTION_KEY = createHash('sha256').update('sigil test key-encryption key').digest('base64');

export interface BenchApi {
  app: NestFastifyApplication;
  url: string;
  key: string;
  close(): Promise<void>;
}

export async function startBenchApi(options: {
  redis: boolean;
  env?: Record<string, string>;
  scopes: Scope[];
  orgName: string;
  /** Run in this PostgreSQL schema (created if missing), so a scenario's data stays its own. */
  schema?: string;
  /** application_name of its PostgreSQL connections, so a scenario can find its backends (their CPU). */
  applicationName?: string;
}): Promise<BenchApi> {
  const base = process.env.DATABASE_URL ?? DEFAULT_DATABASE_URL;
  const params = [
    options.schema ? `options=${encodeURIComponent(`-c search_path=${options.schema}`)}` : '',
    options.applicationName ? `application_name=${encodeURIComponent(options.applicationName)}` : '',
  ].filter(Boolean);
  const databaseUrl = params.length ? `${base}${base.includes('?') ? '&' : '?'}${params.join('&')}` : base;
  const config = loadConfig({
    DATABASE_URL: databaseUrl,
    REDIS_URL: options.redis ? (process.env.REDIS_URL ?? DEFAULT_REDIS_URL) : undefined,
    KEY_ENCRYPTION_KEY: process.env.KEY_ENCRYPTION_KEY ?? TEST_KEY_ENCRYPTION_KEY,
    LOG_LEVEL: 'silent',
    WORKERS: 'off',
    ...options.env,
  });
  const app = await createApp(config, { logger: createLogger('silent') });
  try {
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.getHttpServer().address() as AddressInfo;
    const access = app.get(AccessService);
    const org = await access.createOrganization(options.orgName);
    const { key } = await access.createApiKey(org.org_id, { scopes: options.scopes, mode: 'test' });
    return { app, url: `http://127.0.0.1:${port}`, key, close: () => app.close() };
  } catch (err) {
    await app.close();
    throw err;
  }
}

/** A distinct client IP per operation (sent as X-Forwarded-For), so per-IP limits count but never bind. */
export const clientIp = (op: number): string => `10.${(op >> 16) & 255}.${(op >> 8) & 255}.${op & 255}`;
