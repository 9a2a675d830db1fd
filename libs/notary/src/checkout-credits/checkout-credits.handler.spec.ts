import { InMemoryEventStore } from '@app/event-store';
import { SettleOutcome, SettlementProvider, SettleRequest, LookupResult } from '@app/settlement';
import { certificatesProjection } from '../certificates/certificate.projection';
import { CreditsRepository, CreditTotals } from '../credits/credits.repository';
import { NOTARY_CREDITS_CHECKOUT_FAILED, NOTARY_CREDITS_CHECKOUT_STARTED, NOTARY_CREDITS_PURCHASED } from '../domain/credits.aggregate';
import { CheckoutCreditsCommand } from './checkout-credits.command';
import { CheckoutCreditsHandler } from './checkout-credits.handler';

class ScriptedProvider extends SettlementProvider {
  readonly name = 'scripted';
  next: SettleOutcome[] = [];
  lookups: LookupResult[] = [];
  settles: SettleRequest[] = [];
  async settle(request: SettleRequest): Promise<SettleOutcome> {
    this.settles.push(request);
    // Like a real provider, the same idempotency key is the same settlement.
    const same = this.settles.findIndex((r) => r.idempotency_key === request.idempotency_key) + 1;
    return this.next.shift() ?? { outcome: 'succeeded', provider_reference: `ref-${same}` };
  }
  async lookup(): Promise<LookupResult> {
    return this.lookups.shift() ?? { outcome: 'not_found' };
  }
}

describe('CheckoutCreditsHandler (settlement port + credits stream on the in-memory store)', () => {
  const setup = () => {
    const store = new InMemoryEventStore();
    store.registerProjection(certificatesProjection);
    const totals: CreditTotals = { creditsPurchased: async (org) => Number(store.rows('notary_credits').find((r) => r.org_id === org)?.purchased ?? 0) };
    const provider = new ScriptedProvider();
    return { store, provider, sut: new CheckoutCreditsHandler(new CreditsRepository(store), totals, provider) };
  };

  it('charges 100 cents a credit, records NotaryCreditsPurchased and raises the allowance in the same append', async () => {
    const { sut, store, provider } = setup();
    const r = await sut.execute(new CheckoutCreditsCommand('org_a', 5));
    expect(r).toEqual({ checkout_id: expect.any(String), status: 'completed', credits: 5, amount_cents: 500, provider: 'scripted', provider_reference: 'ref-1', reason: null, credits_purchased_total: 5 });
    expect(provider.settles).toEqual([{ idempotency_key: `notary-credits:${r.checkout_id}`, amount_cents: 500, currency: 'USD', merchant_id: 'sigil_notary_credits', reference: r.checkout_id }]);
    const events = await store.readStream('notary-credits-org_a');
    // Started before the charge (what the reconciliation finds if the outcome's record is lost), then the outcome.
    expect(events.map((e) => [e.type, e.data])).toEqual([
      [NOTARY_CREDITS_CHECKOUT_STARTED, { checkout_id: r.checkout_id, credits: 5, amount_cents: 500, provider: 'scripted', provider_key: `notary-credits:${r.checkout_id}` }],
      [NOTARY_CREDITS_PURCHASED, { checkout_id: r.checkout_id, credits: 5, provider: 'scripted', provider_reference: 'ref-1' }],
    ]);
  });

  it('is the same checkout for the same Idempotency-Key: completing again is a replay and adds nothing', async () => {
    const { sut, store } = setup();
    const a = await sut.execute(new CheckoutCreditsCommand('org_a', 2, 'order-1'));
    const b = await sut.execute(new CheckoutCreditsCommand('org_a', 2, 'order-1'));
    expect(b.checkout_id).toBe(a.checkout_id);
    expect(b.credits_purchased_total).toBe(2);
    await sut.complete('org_a', a.checkout_id, 2, a.provider_reference!);
    expect((await store.readStream('notary-credits-org_a')).map((e) => e.type)).toEqual([NOTARY_CREDITS_CHECKOUT_STARTED, NOTARY_CREDITS_PURCHASED]);
    expect((await sut.execute(new CheckoutCreditsCommand('org_b', 2, 'order-1'))).checkout_id).not.toBe(a.checkout_id);
  });

  it('records a declined or failed checkout and adds no credits; an unknown outcome is looked up', async () => {
    const { sut, store, provider } = setup();
    provider.next = [{ outcome: 'declined', code: 'insufficient_funds' }, { outcome: 'unknown' }, { outcome: 'unknown' }];
    provider.lookups = [{ outcome: 'succeeded', provider_reference: 'late-1' }];
    expect(await sut.execute(new CheckoutCreditsCommand('org_a', 3))).toMatchObject({ status: 'declined', reason: 'insufficient_funds', provider_reference: null, credits_purchased_total: 0 });
    expect(await sut.execute(new CheckoutCreditsCommand('org_a', 2))).toMatchObject({ status: 'completed', provider_reference: 'late-1', credits_purchased_total: 2 });
    expect(await sut.execute(new CheckoutCreditsCommand('org_a', 2))).toMatchObject({ status: 'failed', reason: 'settlement_outcome_unknown', credits_purchased_total: 2 });
    expect((await store.readStream('notary-credits-org_a')).map((e) => e.type)).toEqual([
      NOTARY_CREDITS_CHECKOUT_STARTED,
      NOTARY_CREDITS_CHECKOUT_FAILED,
      NOTARY_CREDITS_CHECKOUT_STARTED,
      NOTARY_CREDITS_PURCHASED,
      NOTARY_CREDITS_CHECKOUT_STARTED,
      NOTARY_CREDITS_CHECKOUT_FAILED,
    ]);
  });

  it('refuses a completion of no credits with validation_failed', async () => {
    const { sut } = setup();
    await expect(sut.complete('org_a', 'c1', 0, 'ref')).rejects.toMatchObject({ code: 'validation_failed' });
  });
});
