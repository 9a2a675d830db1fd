import { AppError, DomainError } from '@app/core';
import { openTestStore } from '../../../test/support/test-store';
import { idempotencyMigrations } from './idempotency.migrations';
import { IdempotencyOptions, IdempotencyScope, IdempotencyService } from './idempotency.service';
import { IdempotencyKeyRepository } from './idempotency.repository';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('IdempotencyService (on the real store)', () => {
  let t: Awaited<ReturnType<typeof openTestStore>>;
  beforeAll(async () => {
    t = await openTestStore(idempotencyMigrations);
  });
  afterAll(() => t?.dispose());

  let n = 0;
  const fresh = () => `key-${++n}-${Date.now()}`;
  const scope = (over: Partial<IdempotencyScope> = {}): IdempotencyScope => ({
    orgId: 'org_a',
    caller: 'api_key:key_a',
    key: 'k',
    method: 'POST',
    path: '/api/cdp/authorize',
    body: { amount_cents: 1000, currency: 'USD' },
    ...over,
  });
  const service = (o: IdempotencyOptions = {}) => new IdempotencyService(new IdempotencyKeyRepository(t.db), o);
  /** A handler that counts its runs and answers with the run number. */
  const counting = (status = 201, delayMs = 0) => {
    const h = Object.assign(
      async () => {
        h.runs += 1;
        const run = h.runs;
        if (delayMs) await sleep(delayMs);
        return { status, body: { run, id: `txn_${run}` } };
      },
      { runs: 0 },
    );
    return h;
  };

  it('replays the stored first response for the same key and body', async () => {
    const s = service();
    const h = counting();
    const key = fresh();
    const first = await s.run(scope({ key }), h);
    const again = await s.run(scope({ key }), h);
    expect(first).toEqual({ status: 201, body: { run: 1, id: 'txn_1' }, replayed: false });
    expect(again).toEqual({ status: 201, body: { run: 1, id: 'txn_1' }, headers: {}, replayed: true });
    expect(h.runs).toBe(1);
  });

  it('compares bodies by their JCS form: the same body with keys in another order replays', async () => {
    const s = service();
    const h = counting();
    const key = fresh();
    await s.run(scope({ key, body: { a: 1, b: { d: [1, 2], c: 'x' } } }), h);
    const again = await s.run(scope({ key, body: { b: { c: 'x', d: [1, 2] }, a: 1 } }), h);
    expect(again.replayed).toBe(true);
    expect(h.runs).toBe(1);
  });

  it('answers 422 idempotency_key_reused for a different body, method or path', async () => {
    const s = service();
    const h = counting();
    const key = fresh();
    await s.run(scope({ key }), h);
    const reused = { code: 'idempotency_key_reused', status: 422 };
    await expect(s.run(scope({ key, body: { amount_cents: 1001, currency: 'USD' } }), h)).rejects.toMatchObject(reused);
    await expect(s.run(scope({ key, path: '/api/cdp/transactions/txn_1/execute' }), h)).rejects.toMatchObject(reused);
    await expect(s.run(scope({ key, method: 'PUT' }), h)).rejects.toMatchObject(reused);
    expect(h.runs).toBe(1);
  });

  it('scopes keys to the organization', async () => {
    const s = service();
    const h = counting();
    const key = fresh();
    await s.run(scope({ key, orgId: 'org_a' }), h);
    const other = await s.run(scope({ key, orgId: 'org_b', body: { something: 'else' } }), h);
    expect(other).toMatchObject({ replayed: false, body: { run: 2 } });
    expect(h.runs).toBe(2);
  });

  it("answers 422 idempotency_key_reused to another caller of the organization with the same key and body: never the first caller's response, and its handler does not run", async () => {
    const s = service();
    const h = counting();
    const key = fresh();
    const first = await s.run(scope({ key, caller: 'user:alice' }), h);
    const other = await s.run(scope({ key, caller: 'user:bob' }), h).catch((e: AppError) => e);
    expect(other).toBeInstanceOf(AppError);
    expect(other).toMatchObject({ code: 'idempotency_key_reused', status: 422, message: expect.stringMatching(/another caller/) });
    expect((other as AppError).headers?.['idempotent-replayed']).toBeUndefined();
    await expect(s.run(scope({ key, caller: 'api_key:key_b' }), h)).rejects.toMatchObject({ code: 'idempotency_key_reused' });
    // The first caller's replay is as before, and the other callers' attempts changed nothing.
    expect(await s.run(scope({ key, caller: 'user:alice' }), h)).toEqual({ ...first, headers: {}, replayed: true });
    expect(h.runs).toBe(1);
    const [row] = await t.db.query<{ caller: string }>('SELECT caller FROM idempotency_keys WHERE organization_id = $1 AND key = $2', ['org_a', key]);
    expect(row.caller).toBe('user:alice');
  });

  it('refuses another caller at once while the first request still runs, without waiting for it', async () => {
    const s = service({ waitMs: 2000 });
    const key = fresh();
    let finish!: () => void;
    const first = s.run(scope({ key }), () => new Promise<{ status: number; body: { done: boolean } }>((resolve) => (finish = () => resolve({ status: 200, body: { done: true } }))));
    await sleep(50);
    const started = Date.now();
    await expect(s.run(scope({ key, caller: 'api_key:key_b' }), counting())).rejects.toMatchObject({ code: 'idempotency_key_reused', status: 422 });
    expect(Date.now() - started).toBeLessThan(1000);
    finish();
    expect(await first).toMatchObject({ replayed: false, body: { done: true } });
  });

  it('runs the handler once for 50 parallel identical requests, and every one gets its response', async () => {
    const s = service();
    const h = counting(201, 150);
    const key = fresh();
    const results = await Promise.all(Array.from({ length: 50 }, () => s.run(scope({ key }), h)));
    expect(h.runs).toBe(1);
    expect(results.every((r) => r.status === 201 && r.body.id === 'txn_1')).toBe(true);
    expect(results.filter((r) => !r.replayed)).toHaveLength(1);
  });

  it('answers 409 idempotency_request_in_progress with Retry-After when the first request outlasts the wait', async () => {
    const s = service({ waitMs: 100 });
    const key = fresh();
    let finish!: () => void;
    const first = s.run(scope({ key }), () => new Promise<{ status: number; body: { done: boolean } }>((resolve) => (finish = () => resolve({ status: 200, body: { done: true } }))));
    await sleep(50);
    await expect(s.run(scope({ key }), counting())).rejects.toMatchObject({
      code: 'idempotency_request_in_progress',
      status: 409,
      headers: { 'retry-after': '1' },
    });
    // A different body is refused at once, even while the first runs.
    await expect(s.run(scope({ key, body: { other: true } }), counting())).rejects.toMatchObject({ code: 'idempotency_key_reused' });
    finish();
    await first;
    expect(await s.run(scope({ key }), counting())).toMatchObject({ body: { done: true }, replayed: true });
  });

  it('does not store 5xx responses or unexpected errors: the claim is released and a retry runs', async () => {
    const s = service();
    const key = fresh();
    let runs = 0;
    expect(await s.run(scope({ key }), async () => ({ status: 503, body: { run: ++runs } }))).toEqual({ status: 503, body: { run: 1 }, replayed: false });
    await expect(
      s.run(scope({ key }), async () => {
        runs++;
        throw new Error('database exploded');
      }),
    ).rejects.toThrow('database exploded');
    await expect(
      s.run(scope({ key }), async () => {
        runs++;
        throw new AppError('validation_failed', 'bad', 400);
      }),
    ).rejects.toMatchObject({ code: 'validation_failed' });
    expect(await s.run(scope({ key }), async () => ({ status: 200, body: { run: ++runs } }))).toMatchObject({ body: { run: 4 }, replayed: false });
    expect(await s.run(scope({ key }), async () => ({ status: 200, body: { run: ++runs } }))).toMatchObject({ body: { run: 4 }, replayed: true });
  });

  it('stores a thrown domain refusal and replays it by throwing it again, marked as replayed', async () => {
    const s = service();
    const key = fresh();
    let runs = 0;
    const refuse = async (): Promise<never> => {
      runs++;
      throw new AppError('not_found', 'transaction not found', 404, { id: 'txn_x' });
    };
    await expect(s.run(scope({ key }), refuse)).rejects.toMatchObject({ code: 'not_found', status: 404 });
    const replay = await s.run(scope({ key }), refuse).catch((e: AppError) => e);
    expect(replay).toBeInstanceOf(AppError);
    expect(replay).toMatchObject({ code: 'not_found', status: 404, message: 'transaction not found', details: { id: 'txn_x' }, headers: { 'idempotent-replayed': 'true' } });
    expect(runs).toBe(1);
  });

  it("stores an aggregate's DomainError (no HTTP status of its own) with its catalogued status, and replays it", async () => {
    const s = service();
    const key = fresh();
    let runs = 0;
    const refuse = async (): Promise<never> => {
      runs++;
      throw new DomainError('payment_declined', 'the provider declined transaction txn_x', { provider: 'sandbox' });
    };
    await expect(s.run(scope({ key }), refuse)).rejects.toBeInstanceOf(DomainError);
    const replay = await s.run(scope({ key }), refuse).catch((e: AppError) => e);
    expect(replay).toMatchObject({ code: 'payment_declined', status: 402, details: { provider: 'sandbox' }, headers: { 'idempotent-replayed': 'true' } });
    expect(runs).toBe(1);
  });

  it('keeps a live claimant\'s lease beyond its length, so a slow request is not run twice', async () => {
    const s = service({ leaseMs: 150, waitMs: 3000 });
    const h = counting(200, 600);
    const key = fresh();
    const first = s.run(scope({ key }), h);
    await sleep(350); // past the original lease; the claimant has renewed it
    const second = await s.run(scope({ key }), h);
    expect(second).toMatchObject({ replayed: true, body: { run: 1 } });
    expect((await first).replayed).toBe(false);
    expect(h.runs).toBe(1);
  });

  it('takes over a claim whose process died once its lease has run out', async () => {
    const s = service();
    const key = fresh();
    const body = scope().body;
    const hash = (await import('./idempotency-key')).requestHash(body);
    // What a process that claimed the key and then died leaves behind.
    await t.db.query(
      `INSERT INTO idempotency_keys (organization_id, key, caller, request_hash, method_path, status, claim_token, locked_until, created_at, expires_at)
       VALUES ('org_a', $1, 'api_key:key_a', $2, 'POST /api/cdp/authorize', 'in_progress', gen_random_uuid(), now() - interval '1 second', now() - interval '61 seconds', now() + interval '1 day')`,
      [key, hash],
    );
    const h = counting();
    // Only its own caller takes it over; another caller is refused.
    await expect(s.run(scope({ key, caller: 'api_key:key_b' }), h)).rejects.toMatchObject({ code: 'idempotency_key_reused' });
    expect(await s.run(scope({ key }), h)).toMatchObject({ replayed: false, body: { run: 1 } });
    expect(await s.run(scope({ key }), h)).toMatchObject({ replayed: true, body: { run: 1 } });
    // A lapsed claim is still bound to its body.
    const other = fresh();
    await t.db.query(
      `INSERT INTO idempotency_keys (organization_id, key, request_hash, method_path, status, claim_token, locked_until, created_at, expires_at)
       VALUES ('org_a', $1, $2, 'POST /api/cdp/authorize', 'in_progress', gen_random_uuid(), now() - interval '1 second', now(), now() + interval '1 day')`,
      [other, hash],
    );
    await expect(s.run(scope({ key: other, body: { different: 1 } }), h)).rejects.toMatchObject({ code: 'idempotency_key_reused' });
  });

  it('compares a key stored before callers were recorded (no caller) on its method, path and body alone, as then', async () => {
    const s = service();
    const key = fresh();
    const hash = (await import('./idempotency-key')).requestHash(scope().body);
    await t.db.query(
      `INSERT INTO idempotency_keys (organization_id, key, request_hash, method_path, status, response_status, response_body, created_at, expires_at)
       VALUES ('org_a', $1, $2, 'POST /api/cdp/authorize', 'completed', 201, '{"id":"txn_old"}', now(), now() + interval '1 day')`,
      [key, hash],
    );
    const h = counting();
    expect(await s.run(scope({ key, caller: 'api_key:key_b' }), h)).toEqual({ status: 201, body: { id: 'txn_old' }, headers: {}, replayed: true });
    await expect(s.run(scope({ key, body: { other: true } }), h)).rejects.toMatchObject({ code: 'idempotency_key_reused' });
    expect(h.runs).toBe(0);
  });

  it("stores the response of a claim whose row vanished while it ran, and leaves a claim someone took over alone", async () => {
    const s = service();
    const h = counting();
    // The row is gone before the handler finishes (an operator purge, say): the answer is kept.
    const gone = fresh();
    expect(
      await s.run(scope({ key: gone }), async () => {
        await t.db.query('DELETE FROM idempotency_keys WHERE organization_id = $1 AND key = $2', ['org_a', gone]);
        return h();
      }),
    ).toMatchObject({ replayed: false, body: { run: 1 } });
    expect(await s.run(scope({ key: gone }), h)).toMatchObject({ replayed: true, body: { run: 1 } });
    // Another request took the claim over (a new token): the first one's response is not written over it.
    const taken = fresh();
    await s.run(scope({ key: taken }), async () => {
      await t.db.query('UPDATE idempotency_keys SET claim_token = gen_random_uuid() WHERE organization_id = $1 AND key = $2', ['org_a', taken]);
      return h();
    });
    const [row] = await t.db.query<{ status: string; response_body: unknown }>('SELECT status, response_body FROM idempotency_keys WHERE organization_id = $1 AND key = $2', ['org_a', taken]);
    expect(row).toEqual({ status: 'in_progress', response_body: null });
  });

  it('completes a key named twice in one batch (a lapsed claimant and the one that took over): the holder of the claim wins, nothing fails', async () => {
    const repo = new IdempotencyKeyRepository(t.db);
    const key = fresh();
    const claim = { org: 'org_a', key, caller: 'api_key:key_a', hash: 'h', methodPath: 'POST /x' };
    const holder = '11111111-1111-4111-8111-111111111111';
    const lapsed = '22222222-2222-4222-8222-222222222222';
    expect(await repo.claim(claim, holder, 60_000, 60_000)).toBe(true);
    const answer = (n: number) => ({ status: 200, body: { n }, headers: null, isError: false });
    // Both in the same turn of the event loop, so in one batch; in either order.
    await Promise.all([repo.complete(claim, holder, 60_000, answer(2)), repo.complete(claim, lapsed, 60_000, answer(1))]);
    expect(await repo.read('org_a', key)).toMatchObject({ status: 'completed', response_body: { n: 2 } });
    const other = { ...claim, key: fresh() };
    expect(await repo.claim(other, holder, 60_000, 60_000)).toBe(true);
    await Promise.all([repo.complete(other, lapsed, 60_000, answer(1)), repo.complete(other, holder, 60_000, answer(2))]);
    expect(await repo.read('org_a', other.key)).toMatchObject({ status: 'completed', response_body: { n: 2 } });
  });

  it('ignores and overwrites expired keys, and purges them', async () => {
    const s = service({ retentionMs: 100 });
    const h = counting();
    const key = fresh();
    await s.run(scope({ key, orgId: 'org_purge' }), h);
    await sleep(150);
    // Past retention the key is free again, even for another body.
    expect(await s.run(scope({ key, orgId: 'org_purge', body: { new: true } }), h)).toMatchObject({ replayed: false, body: { run: 2 } });
    await s.run(scope({ key: fresh(), orgId: 'org_purge' }), h);
    await sleep(150);
    expect(await s.purgeExpired()).toBeGreaterThanOrEqual(2);
    expect(await t.db.query(`SELECT 1 FROM idempotency_keys WHERE organization_id = 'org_purge'`)).toEqual([]);
    // A kept key survives the purge.
    await service().run(scope({ key, orgId: 'org_purge' }), h);
    await s.purgeExpired();
    expect(await t.db.query(`SELECT 1 FROM idempotency_keys WHERE organization_id = 'org_purge'`)).toHaveLength(1);
  });

  it('refuses a malformed key with 400 invalid_idempotency_key before running anything', async () => {
    const h = counting();
    for (const key of ['', 'x'.repeat(256), 'caf\u00e9', 'a\nb']) {
      await expect(service().run(scope({ key }), h)).rejects.toMatchObject({ code: 'invalid_idempotency_key', status: 400 });
    }
    expect(h.runs).toBe(0);
  });
});
