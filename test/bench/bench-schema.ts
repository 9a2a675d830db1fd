/**
 * A fresh PostgreSQL schema for one scenario run, dropped afterwards (also on Ctrl-C), so a run
 * never leaves its rows and events in the shared database (where test suites' projections
 * would then have to work through them).
 */
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { DEFAULT_DATABASE_URL } from './api';
import { cleanupOnInterrupt } from './harness';

export async function withBenchSchema<T>(prefix: string, fn: (schema: string) => Promise<T>): Promise<T> {
  const schema = `${prefix}_${randomBytes(5).toString('hex')}`;
  const admin = new Client({ connectionString: process.env.DATABASE_URL ?? DEFAULT_DATABASE_URL });
  await admin.connect();
  const drop = () => admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).then(() => undefined);
  const forget = cleanupOnInterrupt(drop);
  try {
    await admin.query(`CREATE SCHEMA ${schema}`);
    return await fn(schema);
  } finally {
    forget();
    await drop().catch(() => undefined);
    await admin.end().catch(() => undefined);
  }
}
