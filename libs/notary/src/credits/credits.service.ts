import { createHash, randomUUID } from 'node:crypto';
import { AppError } from '@app/core';
import type { EventStore } from '@app/event-store';
import { CertificateReadModel } from '../certificates/certificate-read-model.repository';
import { SettleOutcome, SettlementProvider, SettleRequest } from '@app/settlement';
import { CREDITS_STREAM_PREFIX, NOTARY_CREDITS_PURCHASED } from '../certificates/certificate.projection';

export const CREDIT_PRICE_CENTS = 100;
export const creditsStream = (orgId: string) => `${CREDITS_STREAM_PREFIX}${orgId}`;

/** A uuid derived from a name: the same completion always gets the same event id. */
export function derivedEventId(name: string): string {
  const h = createHash('sha256').update(name).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${((parseInt(h[16], 16) & 3) | 8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

export interface CheckoutResult {
  checkout_id: string;
  status: 'completed' | 'declined' | 'failed';
  credits: number;
  amount_cents: number;
  provider: string;
  provider_reference: string | null;
  reason: string | null;
  credits_purchased_total: number;
}

/**
 * Issuance credits beyond the free quota, bought through the SettlementProvider port. A
 * completed purchase is the event NotaryCreditsPurchased with an id derived from the checkout,
 * so a duplicate completion is an idempotent replay and never adds credits twice; a failed or
 * declined purchase adds none.
 */
export class CreditsService {
  constructor(
    private readonly readModel: CertificateReadModel,
    private readonly store: EventStore,
    private readonly provider: SettlementProvider,
  ) {}

  purchased(orgId: string): Promise<number> {
    return this.readModel.creditsPurchased(orgId);
  }

  /** Starts and (with the sandbox provider, at once) completes a purchase. */
  async checkout(orgId: string, credits: number, idempotencyKey?: string): Promise<CheckoutResult> {
    // The same Idempotency-Key is the same checkout: retried requests charge and credit once.
    const checkoutId = idempotencyKey ? derivedEventId(`checkout:${orgId}:${idempotencyKey}`) : randomUUID();
    const amount = credits * CREDIT_PRICE_CENTS;
    const outcome = await this.settle({
      idempotency_key: `notary-credits:${checkoutId}`,
      amount_cents: amount,
      currency: 'USD',
      merchant_id: 'sigil_notary_credits',
      reference: checkoutId,
    });
    const base = { checkout_id: checkoutId, credits, amount_cents: amount, provider: this.provider.name };
    if (outcome.outcome !== 'succeeded') {
      await this.store.append(creditsStream(orgId), [
        {
          event_id: derivedEventId(`${checkoutId}:failed:${outcome.outcome}`),
          type: 'NotaryCreditsCheckoutFailed',
          data: { checkout_id: checkoutId, status: outcome.outcome, reason: outcome.code },
        },
      ]);
      return {
        ...base,
        status: outcome.outcome,
        provider_reference: null,
        reason: outcome.code,
        credits_purchased_total: await this.purchased(orgId),
      };
    }
    await this.complete(orgId, checkoutId, credits, outcome.provider_reference);
    return { ...base, status: 'completed', provider_reference: outcome.provider_reference, reason: null, credits_purchased_total: await this.purchased(orgId) };
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
    return found.outcome === 'not_found' ? { outcome: 'failed', code: 'settlement_outcome_unknown', retryable: true } : found;
  }

  /**
   * Records a completed purchase; the certificates projection adds the credits to the allowance
   * in the same append. Completing the same checkout again is an idempotent replay (its event id
   * is derived from the checkout) and adds nothing.
   */
  async complete(orgId: string, checkoutId: string, credits: number, providerReference: string): Promise<void> {
    if (!Number.isInteger(credits) || credits < 1) throw new AppError('validation_failed', 'credits must be a positive integer', 400);
    await this.store.append(creditsStream(orgId), [
      {
        event_id: derivedEventId(`${checkoutId}:purchased`),
        type: NOTARY_CREDITS_PURCHASED,
        data: { checkout_id: checkoutId, credits, provider: this.provider.name, provider_reference: providerReference },
      },
    ]);
  }
}
