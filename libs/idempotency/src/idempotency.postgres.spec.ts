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

  const scope = (key: string) => ({ orgId: 'org_a', key, method: 'POST', path: '/api/cdp/authorize', body: { amount_cents: 1000 } });

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
});
