import { openTestStore } from '../../../test/support/test-store';
import { SandboxLedger } from './sandbox-ledger.repository';
import { SandboxSettlementProvider, sandboxReference } from './sandbox-provider';
import { settlementMigrations } from './settlement.migrations';
import { SettleRequest } from './settlement-provider.port';

describe('SandboxSettlementProvider (ledger in the store)', () => {
  let t: Awaited<ReturnType<typeof openTestStore>>;
  let p: SandboxSettlementProvider;
  beforeAll(async () => {
    t = await openTestStore(settlementMigrations);
    p = new SandboxSettlementProvider(new SandboxLedger(t.db));
  });
  afterAll(() => t?.dispose());

  let n = 0;
  const req = (amount_cents: number, merchant_id = 'm_shop', over: Partial<SettleRequest> = {}): SettleRequest => ({
    idempotency_key: `txn-${++n}-${Date.now()}`,
    amount_cents,
    currency: 'USD',
    merchant_id,
    reference: `txn_${n}`,
    ...over,
  });
  const ledger = (key: string) => t.db.query<{ outcome: string; attempts: number }>('SELECT outcome, attempts FROM sandbox_settlements WHERE idempotency_key = $1', [key]);

  it('succeeds with a reference derived from the key, and a repeat returns the same settlement', async () => {
    const r = req(1000);
    const first = await p.settle(r);
    expect(first).toEqual({ outcome: 'succeeded', provider_reference: sandboxReference(r.idempotency_key) });
    expect(first).toMatchObject({ provider_reference: expect.stringMatching(/^sbx_[0-9a-f]{24}$/) });
    expect(await p.settle(r)).toEqual(first);
    expect(await p.lookup(r.idempotency_key)).toEqual(first);
    expect(await ledger(r.idempotency_key)).toEqual([{ outcome: 'succeeded', attempts: 1 }]);
  });

  it('declines amounts ending in 02 and merchant m_decline, for good', async () => {
    for (const r of [req(1002), req(1000, 'm_decline')]) {
      expect(await p.settle(r)).toEqual({ outcome: 'declined', code: 'insufficient_funds' });
      expect(await p.settle(r)).toEqual({ outcome: 'declined', code: 'insufficient_funds' });
      expect(await p.lookup(r.idempotency_key)).toEqual({ outcome: 'declined', code: 'insufficient_funds' });
    }
  });

  it('fails amounts ending in 05 and merchant m_fail once per key (retryable 5xx); the retry succeeds', async () => {
    for (const r of [req(1005), req(1000, 'm_fail')]) {
      expect(await p.settle(r)).toEqual({ outcome: 'failed', code: 'provider_unavailable', retryable: true });
      expect(await p.lookup(r.idempotency_key)).toEqual({ outcome: 'failed', code: 'provider_unavailable', retryable: true });
      const retried = await p.settle(r);
      expect(retried).toEqual({ outcome: 'succeeded', provider_reference: sandboxReference(r.idempotency_key) });
      expect(await p.settle(r)).toEqual(retried);
      expect(await ledger(r.idempotency_key)).toEqual([{ outcome: 'succeeded', attempts: 2 }]);
    }
    // A new key for the same amount fails its first attempt again.
    expect(await p.settle(req(1005))).toMatchObject({ outcome: 'failed' });
  });

  it('times out on amounts ending in 08 and merchant m_timeout, having settled: lookup and a retry say succeeded, once', async () => {
    for (const r of [req(1008), req(1000, 'm_timeout')]) {
      expect(await p.settle(r)).toEqual({ outcome: 'unknown' });
      const settled = { outcome: 'succeeded', provider_reference: sandboxReference(r.idempotency_key) };
      expect(await p.lookup(r.idempotency_key)).toEqual(settled);
      expect(await p.settle(r)).toEqual(settled);
      expect(await ledger(r.idempotency_key)).toEqual([{ outcome: 'succeeded', attempts: 1 }]);
    }
  });

  it('answers not_found for a key it never saw', async () => {
    expect(await p.lookup('never-seen')).toEqual({ outcome: 'not_found' });
  });

  it('keeps its ledger in the database: another instance (another process) sees the same settlements', async () => {
    const r = req(1008);
    expect(await p.settle(r)).toEqual({ outcome: 'unknown' });
    const elsewhere = new SandboxSettlementProvider(new SandboxLedger(t.db));
    expect(await elsewhere.lookup(r.idempotency_key)).toMatchObject({ outcome: 'succeeded' });
    expect(await elsewhere.settle(r)).toMatchObject({ outcome: 'succeeded' });
  });

  it('settles once when many retries of one key race', async () => {
    const r = req(1005);
    const outcomes = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? p : new SandboxSettlementProvider(new SandboxLedger(t.db))).settle(r)));
    const refs = new Set(outcomes.filter((o) => o.outcome === 'succeeded').map((o) => (o as { provider_reference: string }).provider_reference));
    expect(outcomes.filter((o) => o.outcome === 'failed')).toHaveLength(1);
    expect(refs).toEqual(new Set([sandboxReference(r.idempotency_key)]));
    expect(await ledger(r.idempotency_key)).toEqual([{ outcome: 'succeeded', attempts: 2 }]);
  });

  it('refuses a key reused with other parameters, and malformed requests, without settling', async () => {
    const r = req(1000);
    await p.settle(r);
    expect(await p.settle({ ...r, amount_cents: 2000 })).toEqual({ outcome: 'failed', code: 'idempotency_key_reused', retryable: false });
    expect(await p.settle({ ...r, merchant_id: 'm_other' })).toEqual({ outcome: 'failed', code: 'idempotency_key_reused', retryable: false });
    expect(await p.settle(req(0))).toEqual({ outcome: 'failed', code: 'invalid_amount', retryable: false });
    expect(await p.settle(req(10.5))).toEqual({ outcome: 'failed', code: 'invalid_amount', retryable: false });
    expect(await p.settle(req(100, 'm_shop', { currency: 'usd' }))).toEqual({ outcome: 'failed', code: 'invalid_currency', retryable: false });
    expect(await p.settle(req(100, 'm_shop', { idempotency_key: '' }))).toEqual({ outcome: 'failed', code: 'invalid_idempotency_key', retryable: false });
    expect(await p.settle(req(100, ''))).toEqual({ outcome: 'failed', code: 'invalid_merchant', retryable: false });
  });
});
