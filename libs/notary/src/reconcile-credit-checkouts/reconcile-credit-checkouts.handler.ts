import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { Clock } from '@app/core';
import { SettlementProvider } from '@app/settlement';
import { CreditCheckouts } from '../credits/credit-checkouts.repository';
import { CreditsRepository } from '../credits/credits.repository';
import { failCheckout, purchaseCredits } from '../domain/credits.aggregate';
import { NOTARY_CLOCK } from '../issue-certificate/issue-certificate.handler';
import { ReconcileCreditCheckoutsCommand } from './reconcile-credit-checkouts.command';

/**
 * A checkout is recorded as started before its charge. One with no outcome after
 * RECONCILE_AFTER_MS (a crash between the charge and its record, or a provider that never said)
 * is looked up at the provider by its key and its outcome recorded: a charge that went through
 * buys its credits, one that did not is recorded failed. Outcome events have ids derived from the
 * checkout, so sweepers in several processes record each outcome once. Returns how many it looked at.
 */
@CommandHandler(ReconcileCreditCheckoutsCommand)
export class ReconcileCreditCheckoutsHandler implements ICommandHandler<ReconcileCreditCheckoutsCommand, number> {
  constructor(
    private readonly checkouts: CreditCheckouts,
    private readonly credits: CreditsRepository,
    private readonly provider: SettlementProvider,
    @Inject(NOTARY_CLOCK) private readonly clock: Clock,
  ) {}

  async execute(cmd: ReconcileCreditCheckoutsCommand): Promise<number> {
    const due = await this.checkouts.unsettled(new Date(this.clock.now().getTime() - cmd.olderThanMs), cmd.limit);
    for (const c of due) {
      const found = await this.provider.lookup(c.provider_key);
      if (found.outcome === 'succeeded') {
        await this.credits.record(c.org_id, purchaseCredits({ checkoutId: c.checkout_id, credits: c.credits, provider: this.provider.name, providerReference: found.provider_reference }));
      } else if (found.outcome === 'not_found') {
        await this.credits.record(c.org_id, failCheckout({ checkoutId: c.checkout_id, status: 'failed', reason: 'settlement_not_started', reconciled: true }));
      } else {
        await this.credits.record(c.org_id, failCheckout({ checkoutId: c.checkout_id, status: found.outcome, reason: found.code, reconciled: true }));
      }
    }
    return due.length;
  }
}
