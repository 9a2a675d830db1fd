import { Inject } from '@nestjs/common';
import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { Clock } from '@app/core';
import { COMMERCE_CLOCK } from '../transactions/commerce-clock';
import { DEFAULT_POLICY_ID } from '../domain/policy';
import { evaluatePolicy, Evaluation } from '../domain/evaluate';
import { PolicyService } from '../policies/policy.service';
import { QuotePaymentQuery } from './quote-payment.query';

export interface PaymentQuote extends Evaluation {
  quoted: true;
  policy_id: string;
  /** null: the organization has no such policy (the quote is blocked, POLICY_NOT_FOUND, as authorize would be). */
  version: number | null;
  policy_hash: string | null;
  evaluated_at: string;
  spend_caps_evaluated_against: 'none' | 'recorded_spend';
}

/**
 * The quote: the request evaluated against the caller's current policy and its recorded spend, as
 * authorize would evaluate it at this instant; nothing is recorded, reserved or signed, so a
 * quote is no promise (a concurrent authorization may take the room it saw).
 */
@QueryHandler(QuotePaymentQuery)
export class QuotePaymentHandler implements IQueryHandler<QuotePaymentQuery, PaymentQuote> {
  constructor(
    @Inject(PolicyService) private readonly policies: PolicyService,
    @Inject(COMMERCE_CLOCK) private readonly clock: Clock,
  ) {}

  async execute(q: QuotePaymentQuery): Promise<PaymentQuote> {
    const policyId = q.request.policy_id ?? DEFAULT_POLICY_ID;
    const simulated = await this.policies.simulate(q.orgId, policyId, q.request);
    if (simulated) return { quoted: true, ...simulated };
    const now = this.clock.now();
    return {
      quoted: true,
      policy_id: policyId,
      version: null,
      policy_hash: null,
      evaluated_at: now.toISOString(),
      ...evaluatePolicy(null, q.request, { now, spent: () => 0 }),
      spend_caps_evaluated_against: 'none',
    };
  }
}
