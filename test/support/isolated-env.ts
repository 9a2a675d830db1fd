import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import Redis from 'ioredis';

/**
 * Environment for an app that must not share work with the other suites' apps: in the
 * PostgreSQL pass, its own schema (so other apps' projections and workers never see its events)
 * and its own BullMQ prefix (so other apps' workers never take its jobs). Embedded: nothing to do.
 */
export async function isolatedEnv(): Promise<{ env: Record<string, string>; dispose(): Promise<void> }> {
  const tag = randomBytes(5).toString('hex');
  const env: Record<string, string> = { WEBHOOK_QUEUE_PREFIX: `sigil-test-${tag}` };
  const url = process.env.DATABASE_URL;
  const schema = `iso_${tag}`;
  if (url) {
    const c = new Client({ connectionString: url });
    await c.connect();
    await c.query(`CREATE SCHEMA ${schema}`);
    await c.end();
    const u = new URL(url);
    u.searchParams.set('options', `-c search_path=${schema}`);
    env.DATABASE_URL = u.toString();
  }
  return {
    env,
    async dispose() {
      if (url) {
        const c = new Client({ connectionString: url });
        await c.connect();
        await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
        await c.end();
      }
      if (process.env.REDIS_URL) {
        const redis = new Redis(process.env.REDIS_URL, { lazyConnect: true });
        await redis.connect();
        let cursor = '0';
        do {
          const [next, keys] = await redis.scan(cursor, 'MATCH', `${env.WEBHOOK_QUEUE_PREFIX}:*`, 'COUNT', 1000);
          if (keys.length) await redis.del(...keys);
          cursor = next;
        } while (cursor !== '0');
        await redis.quit();
      }
    },
  };
}
