import type { EventStore } from '@app/event-store';
import type { SettlementProvider } from '@app/settlement';
import { CheckoutCreditsCommand, CheckoutResult } from '../checkout-credits/checkout-credits.command';
import { CheckoutCreditsHandler } from '../checkout-credits/checkout-credits.handler';
import { CreditsRepository, CreditTotals } from './credits.repository';

export { CREDIT_PRICE_CENTS, derivedEventId } from '../domain/credits.aggregate';
export { creditsStream } from './credits.repository';
export type { CheckoutResult } from '../checkout-credits/checkout-credits.command';

/**
 * The credits an organization bought (a query of the certificates read model), and, for callers
 * without a CommandBus (tests, benchmarks), the checkout-credits use case's own handler.
 */
export class CreditsService {
  private readonly handler: CheckoutCreditsHandler;

  constructor(
    private readonly totals: CreditTotals,
    store: EventStore,
    provider: SettlementProvider,
  ) {
    this.handler = new CheckoutCreditsHandler(new CreditsRepository(store), totals, provider);
  }

  purchased(orgId: string): Promise<number> {
    return this.totals.creditsPurchased(orgId);
  }

  checkout(orgId: string, credits: number, idempotencyKey?: string): Promise<CheckoutResult> {
    return this.handler.execute(new CheckoutCreditsCommand(orgId, credits, idempotencyKey));
  }

  /** Records a completed purchase; completing the same checkout again adds nothing. */
  complete(orgId: string, checkoutId: string, credits: number, providerReference: string): Promise<void> {
    return this.handler.complete(orgId, checkoutId, credits, providerReference);
  }
}
