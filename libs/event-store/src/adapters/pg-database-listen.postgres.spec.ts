import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { PgDatabase } from './pg-database';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

/** The shared LISTEN connection of PgDatabase, when it drops. */
describe('PgDatabase.listen (PostgreSQL)', () => {
  const url = process.env.DATABASE_URL;
  if (!url) throw new Error('DATABASE_URL is required');
  let admin: Client;
  beforeAll(async () => {
    admin = new Client({ connectionString: url });
    await admin.connect();
  });
  afterAll(() => admin.end());

  it('listens again after its connection is cut, tells every listener to look again, and hears later notifications', async () => {
    const app = `listen_${randomBytes(4).toString('hex')}`;
    const db = new PgDatabase({ connectionString: url, applicationName: app, max: 2 });
    try {
      const heard = { a: 0, b: 0 };
      await db.listen('spec_channel_a', () => heard.a++);
      await db.listen('spec_channel_b', () => heard.b++);
      await admin.query(`SELECT pg_notify('spec_channel_a', NULL)`);
      await until('the first notification', () => heard.a === 1);

      // Cut the listening backend, as a server restart or a network failure would.
      const { rows } = await admin.query<{ n: number }>(
        `SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE application_name = $1 AND query LIKE 'LISTEN%'`,
        [app],
      );
      expect(rows[0].n).toBe(1);

      // Once it stands again, each listener is called (what was sent meanwhile is lost)...
      await until('the call after reconnecting', () => heard.a === 2 && heard.b === 1);
      // ...and notifications reach it again, on every channel.
      await admin.query(`SELECT pg_notify('spec_channel_b', NULL)`);
      await until('a notification after reconnecting', () => heard.b === 2);
      expect(heard).toEqual({ a: 2, b: 2 });
    } finally {
      await db.close();
    }
  });

  it('stops listening for good once closed', async () => {
    const app = `listen_${randomBytes(4).toString('hex')}`;
    const db = new PgDatabase({ connectionString: url, applicationName: app, max: 2 });
    let heard = 0;
    await db.listen('spec_channel_c', () => heard++);
    await db.close();
    await sleep(300);
    const { rows } = await admin.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1`, [app]);
    expect(rows[0].n).toBe(0);
    expect(heard).toBe(0);
  });
});
