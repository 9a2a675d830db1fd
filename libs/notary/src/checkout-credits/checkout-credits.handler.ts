import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { SettleOutcome, SettlementProvider, SettleRequest } from '@app/settlement';
import { checkoutIdFor, CREDIT_PRICE_CENTS, failCheckout, OUTCOME_UNKNOWN, purchaseCredits, startCheckout } from '../domain/credits.aggregate';
import { CreditsRepository, CreditTotals } from '../credits/credits.repository';
import { CheckoutCreditsCommand, CheckoutResult } from './checkout-credits.command';

/**
 * Record the checkout as started, settle through the SettlementProvider port (the sandbox
 * completes at once), then record the outcome on the organization's credits stream: a completed
 * purchase raises the allowance in the same append (certificates projection); a declined or
 * failed one adds nothing; one still unknown is left to the reconciliation.
 */
@CommandHandler(CheckoutCreditsCommand)
export class CheckoutCreditsHandler implements ICommandHandler<CheckoutCreditsCommand, CheckoutResult> {
  constructor(
    private readonly credits: CreditsRepository,
    private readonly totals: CreditTotals,
    private readonly provider: SettlementProvider,
  ) {}

  async execute(cmd: CheckoutCreditsCommand): Promise<CheckoutResult> {
    const checkoutId = checkoutIdFor(cmd.orgId, cmd.idempotencyKey);
    const amount = cmd.credits * CREDIT_PRICE_CENTS;
    const providerKey = `notary-credits:${checkoutId}`;
    // Recorded before the charge: if this process dies between the charge and its outcome's
    // record, the reconciliation (ReconcileCreditCheckoutsHandler) finds it and settles the record.
    await this.credits.record(cmd.orgId, startCheckout({ checkoutId, credits: cmd.credits, amountCents: amount, provider: this.provider.name, providerKey }));
    const outcome = await this.settle({
      idempotency_key: providerKey,
      amount_cents: amount,
      currency: 'USD',
      merchant_id: 'sigil_notary_credits',
      reference: checkoutId,
    });
    const base = { checkout_id: checkoutId, credits: cmd.credits, amount_cents: amount, provider: this.provider.name };
    if (outcome.outcome !== 'succeeded') {
      await this.credits.record(cmd.orgId, failCheckout({ checkoutId, status: outcome.outcome, reason: outcome.code }));
      return { ...base, status: outcome.outcome, provider_reference: null, reason: outcome.code, credits_purchased_total: await this.totals.creditsPurchased(cmd.orgId) };
    }
    await this.complete(cmd.orgId, checkoutId, cmd.credits, outcome.provider_reference);
    return { ...base, status: 'completed', provider_reference: outcome.provider_reference, reason: null, credits_purchased_total: await this.totals.creditsPurchased(cmd.orgId) };
  }

  /** Records a completed purchase; completing the same checkout again is an idempotent replay and adds nothing. */
  async complete(orgId: string, checkoutId: string, credits: number, providerReference: string): Promise<void> {
    await this.credits.record(orgId, purchaseCredits({ checkoutId, credits, provider: this.provider.name, providerReference }));
  }

  /**
   * Settles through the provider; an unknown outcome (a timeout) is reconciled by a lookup. One
   * still unknown is reported as a retryable failure: a retry with the same Idempotency-Key
   * reuses the provider key, so it never charges twice.
   */
  private async settle(request: SettleRequest): Promise<Exclude<SettleOutcome, { outcome: 'unknown' }>> {
    const outcome = await this.provider.settle(request);
    if (outcome.outcome !== 'unknown') return outcome;
    const found = await this.provider.lookup(request.idempotency_key);
    return found.outcome === 'not_found' ? { outcome: 'failed', code: OUTCOME_UNKNOWN, retryable: true } : found;
  }
}
