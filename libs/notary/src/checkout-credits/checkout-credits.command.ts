/** Buy issuance credits (POST /api/payments/notary-credits-checkout); the Idempotency-Key names the checkout. */
export class CheckoutCreditsCommand {
  constructor(
    readonly orgId: string,
    readonly credits: number,
    readonly idempotencyKey?: string,
  ) {}
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
