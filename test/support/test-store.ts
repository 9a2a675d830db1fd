import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { InlineProjection, Migration, openEventStore, OpenedEventStore } from '@app/event-store';

/**
 * An isolated store for integration tests: PGlite in memory, or (when DATABASE_URL is set) a
 * fresh PostgreSQL schema that is dropped afterwards.
 */
export async function openTestStore(migrations: Migration[] = [], projections: InlineProjection[] = []): Promise<OpenedEventStore & { dispose(): Promise<void> }> {
  const url = process.env.DATABASE_URL;
  const schema = url ? `t_${randomBytes(6).toString('hex')}` : undefined;
  const opened = await openEventStore({ databaseUrl: url, schema, migrations, projections, pollIntervalMs: 50 });
  return {
    ...opened,
    async dispose() {
      await opened.store.close();
      await opened.db.close();
      if (url && schema) {
        const c = new Client({ connectionString: url });
        await c.connect();
        await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
        await c.end();
      }
    },
  };
}
