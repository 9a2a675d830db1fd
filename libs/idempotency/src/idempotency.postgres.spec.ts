import { PgDatabase } from '@app/event-store';
import { openTestStore } from '../../../test/support/test-store';
import { idempotencyMigrations } from './idempotency.migrations';
import { IdempotencyService } from './idempotency.service';
import { IdempotencyKeyRepository } from './idempotency.repository';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Two pools on one database: what two api processes see. */
describe('IdempotencyService across two processes (PostgreSQL)', () => {
  let t: Awaited<ReturnType<typeof openTestStore>>;
  let otherPool: PgDatabase;
  beforeAll(async () => {
    t = await openTestStore(idempotencyMigrations);
    const [{ schema }] = await t.db.query<{ schema: string }>('SELECT current_schema() AS schema');
    otherPool = new PgDatabase({ connectionString: process.env.DATABASE_URL!, schema });
  });
  afterAll(async () => {
    await otherPool?.close();
    await t?.dispose();
  });

  const scope = (key: string) => ({ orgId: 'org_a', caller: 'api_key:key_a', key, method: 'POST', path: '/api/cdp/authorize', body: { amount_cents: 1000 } });

  it('runs the handler once for 50 parallel requests split over two pools, and all get its response', async () => {
    const a = new IdempotencyService(new IdempotencyKeyRepository(t.db));
    const b = new IdempotencyService(new IdempotencyKeyRepository(otherPool));
    let runs = 0;
    const handler = async () => {
      const run = ++runs;
      await sleep(100);
      return { status: 201, body: { transaction_id: `txn_${run}` } };
    };
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 2 ? a : b).run(scope('two-pools'), handler)));
    expect(runs).toBe(1);
    expect(new Set(results.map((r) => r.body.transaction_id))).toEqual(new Set(['txn_1']));
    expect(results.filter((r) => !r.replayed)).toHaveLength(1);
  });

  it('lets the other process take over a claim whose lease ran out, and only then', async () => {
    // A claimant that stops renewing (its process died) is simulated by a lease shorter than a
    // handler that never finishes and a renewal that cannot reach the database.
    const [{ schema }] = await t.db.query<{ schema: string }>('SELECT current_schema() AS schema');
    const dead = new PgDatabase({ connectionString: process.env.DATABASE_URL!, schema, max: 1 });
    const a = new IdempotencyService(new IdempotencyKeyRepository(dead), { leaseMs: 300 });
    let hang!: () => void;
    const abandoned = a.run(scope('takeover'), () => new Promise<{ status: number; body: null }>((r) => (hang = () => r({ status: 201, body: null })))).catch((e: Error) => e);
    await sleep(100);
    await dead.close(); // the process is gone: no renewal, no completion
    const b = new IdempotencyService(new IdempotencyKeyRepository(otherPool), { waitMs: 0 });
    await expect(b.run(scope('takeover'), async () => ({ status: 201, body: { by: 'b' } }))).rejects.toMatchObject({ code: 'idempotency_request_in_progress' });
    await sleep(350);
    expect(await b.run(scope('takeover'), async () => ({ status: 201, body: { by: 'b' } }))).toMatchObject({ replayed: false, body: { by: 'b' } });
    expect(await new IdempotencyService(new IdempotencyKeyRepository(t.db)).run(scope('takeover'), async () => ({ status: 201, body: { by: 'c' } }))).toMatchObject({ replayed: true, body: { by: 'b' } });
    hang(); // the abandoned handler finishes, but its process cannot record anything any more
    expect(await abandoned).toBeInstanceOf(Error);
  });

  it('completes keys through the primary key whatever the table held when the statement was first planned', async () => {
    // A generic plan cached while the table was small once joined each batch of completions to a
    // whole-table scan, for as long as the connection lived (until an ANALYZE).
    const [{ schema }] = await t.db.query<{ schema: string }>('SELECT current_schema() AS schema');
    const one = new PgDatabase({ connectionString: process.env.DATABASE_URL!, schema, max: 1 });
    try {
      await one.query('DELETE FROM idempotency_keys');
      const s = new IdempotencyService(new IdempotencyKeyRepository(one));
      // More than the five runs after which PostgreSQL may settle on a generic plan, on a tiny table.
      for (let i = 0; i < 8; i++) await s.run(scope(`plan-${i}`), async () => ({ status: 200, body: { i } }));
      await one.query(
        `INSERT INTO idempotency_keys (organization_id, key, request_hash, method_path, status, created_at, expires_at)
         SELECT 'org_bulk', 'k' || g, 'h', 'POST /x', 'completed', now(), now() + interval '1 day' FROM generate_series(1, 20000) g`,
      );
      // The connection's own prepared completion, planned as it now runs (the one connection of the pool).
      const [prepared] = await one.query<{ name: string }>(`SELECT name FROM pg_prepared_statements WHERE name LIKE 'idempotency_complete%'`);
      expect(prepared).toBeDefined();
      const batch = JSON.stringify([{ org: 'org_a', key: 'plan-0', hash: 'h', method_path: 'POST /x', token: '00000000-0000-4000-8000-000000000000', retention_ms: 1000, status: 200, is_error: false, body: {}, headers: null }]);
      const plan = (await one.query<{ 'QUERY PLAN': string }>(`EXPLAIN EXECUTE ${prepared.name}('${batch.replaceAll("'", "''")}')`)).map((r) => r['QUERY PLAN']).join('\n');
      expect(plan).not.toMatch(/Seq Scan on idempotency_keys/);
      await s.run(scope('plan-after'), async () => ({ status: 200, body: { after: true } }));
      expect(await s.run(scope('plan-after'), async () => ({ status: 200, body: { after: false } }))).toMatchObject({ replayed: true, body: { after: true } });
    } finally {
      await one.close();
    }
  });
});
