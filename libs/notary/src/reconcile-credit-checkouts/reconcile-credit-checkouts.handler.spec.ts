import { InMemoryEventStore } from '@app/event-store';
import { LookupResult, SettleOutcome, SettlementProvider } from '@app/settlement';
import { certificatesProjection } from '../certificates/certificate.projection';
import { CheckoutCreditsCommand } from '../checkout-credits/checkout-credits.command';
import { CheckoutCreditsHandler } from '../checkout-credits/checkout-credits.handler';
import { creditCheckoutsProjection } from '../credits/credit-checkouts.projection';
import { CreditCheckouts, UnsettledCheckout } from '../credits/credit-checkouts.repository';
import { CreditsRepository, CreditTotals } from '../credits/credits.repository';
import { NOTARY_CREDITS_CHECKOUT_FAILED, NOTARY_CREDITS_PURCHASED } from '../domain/credits.aggregate';
import { ReconcileCreditCheckoutsCommand, RECONCILE_AFTER_MS } from './reconcile-credit-checkouts.command';
import { ReconcileCreditCheckoutsHandler } from './reconcile-credit-checkouts.handler';

/** A provider that knows what it charged by key; `crash` makes the next settle charge and then fail to answer. */
class LedgerProvider extends SettlementProvider {
  readonly name = 'ledger';
  readonly charged = new Map<string, LookupResult>();
  crash = false;
  silent = false;
  async settle(request: { idempotency_key: string }): Promise<SettleOutcome> {
    const known = this.charged.get(request.idempotency_key);
    if (known && known.outcome !== 'not_found') return known;
    if (this.silent) return { outcome: 'unknown' };
    this.charged.set(request.idempotency_key, { outcome: 'succeeded', provider_reference: `ref-${this.charged.size + 1}` });
    if (this.crash) throw new Error('connection reset after the charge');
    return this.charged.get(request.idempotency_key) as SettleOutcome;
  }
  async lookup(key: string): Promise<LookupResult> {
    return this.charged.get(key) ?? { outcome: 'not_found' };
  }
}

/** The read model's query over the in-memory store's rows (SqlCreditCheckouts runs it in SQL; the e2e suite covers that). */
class RowsCreditCheckouts extends CreditCheckouts {
  constructor(private readonly store: InMemoryEventStore) {
    super();
  }
  async unsettled(before: Date, limit: number): Promise<UnsettledCheckout[]> {
    return this.store
      .rows('notary_credit_checkouts')
      .filter((r) => (r.status === 'pending' || r.status === 'unknown') && new Date(String(r.started_at)) < before)
      .slice(0, limit)
      .map((r) => ({ checkout_id: String(r.checkout_id), org_id: String(r.org_id), credits: Number(r.credits), provider_key: String(r.provider_key) }));
  }
}

describe('ReconcileCreditCheckoutsHandler (checkouts left without an outcome, on the in-memory store)', () => {
  const setup = () => {
    const store = new InMemoryEventStore();
    store.registerProjection(certificatesProjection);
    store.registerProjection(creditCheckoutsProjection);
    const totals: CreditTotals = { creditsPurchased: async (org) => Number(store.rows('notary_credits').find((r) => r.org_id === org)?.purchased ?? 0) };
    const provider = new LedgerProvider();
    const credits = new CreditsRepository(store);
    // The store stamps events with the real time; the clock runs with it, moved on by `later`.
    let offset = 1;
    const clock = { now: () => new Date(Date.now() + offset) };
    const later = (ms: number) => (offset += ms);
    const checkout = new CheckoutCreditsHandler(credits, totals, provider);
    const sut = new ReconcileCreditCheckoutsHandler(new RowsCreditCheckouts(store), credits, provider, clock);
    return { store, provider, totals, checkout, sut, later };
  };
  const status = (store: InMemoryEventStore) => store.rows('notary_credit_checkouts').map((r) => r.status);

  it('buys the credits of a charge that went through when the process died before recording it, once', async () => {
    const { store, provider, totals, checkout, sut } = setup();
    provider.crash = true;
    await expect(checkout.execute(new CheckoutCreditsCommand('org_a', 4, 'order-1'))).rejects.toThrow('connection reset');
    expect(status(store)).toEqual(['pending']);
    expect(await totals.creditsPurchased('org_a')).toBe(0);

    // Too recent to be anything but in flight: untouched. Past RECONCILE_AFTER_MS: reconciled.
    expect(await sut.execute(new ReconcileCreditCheckoutsCommand(100))).toBe(0);
    expect(await sut.execute(new ReconcileCreditCheckoutsCommand(100, 0))).toBe(1);
    expect(await totals.creditsPurchased('org_a')).toBe(4);
    expect(status(store)).toEqual(['completed']);
    expect(await sut.execute(new ReconcileCreditCheckoutsCommand(100, 0))).toBe(0);

    // The client's retry with its key is the same charge: a replay, no more credits.
    provider.crash = false;
    expect(await checkout.execute(new CheckoutCreditsCommand('org_a', 4, 'order-1'))).toMatchObject({ status: 'completed', credits_purchased_total: 4 });
    expect((await store.readStream('notary-credits-org_a')).filter((e) => e.type === NOTARY_CREDITS_PURCHASED)).toHaveLength(1);
  });

  it('records a checkout the provider never charged as failed, and settles an unknown outcome when the provider knows it', async () => {
    const { store, provider, totals, checkout, sut, later } = setup();
    // Started, then the process died before asking the provider: nothing charged.
    await new CreditsRepository(store).record('org_b', [
      { event_id: '00000000-0000-4000-8000-000000000001', type: 'notary_credits.checkout_started', data: { checkout_id: 'c-never', credits: 2, amount_cents: 200, provider: 'ledger', provider_key: 'notary-credits:c-never' } },
    ]);
    // Asked, but no answer in time and none by lookup: recorded as unknown.
    provider.silent = true;
    expect(await checkout.execute(new CheckoutCreditsCommand('org_c', 3))).toMatchObject({ status: 'failed', reason: 'settlement_outcome_unknown' });
    expect(status(store).sort()).toEqual(['pending', 'unknown']);

    // The provider settles the silent one after all.
    const silentKey = [...store.rows('notary_credit_checkouts')].find((r) => r.org_id === 'org_c')!.provider_key as string;
    provider.charged.set(silentKey, { outcome: 'succeeded', provider_reference: 'late' });
    later(RECONCILE_AFTER_MS + 1);
    expect(await sut.execute(new ReconcileCreditCheckoutsCommand(100))).toBe(2);
    expect(await totals.creditsPurchased('org_b')).toBe(0);
    expect(await totals.creditsPurchased('org_c')).toBe(3);
    const never = (await store.readStream('notary-credits-org_b')).at(-1)!;
    expect([never.type, never.data]).toEqual([NOTARY_CREDITS_CHECKOUT_FAILED, { checkout_id: 'c-never', status: 'failed', reason: 'settlement_not_started' }]);
    expect(status(store).sort()).toEqual(['completed', 'failed']);
  });
});
