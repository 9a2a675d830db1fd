/**
 * The SettlementProvider port: how money moves, behind one interface. Every charge carries an
 * idempotency key that the provider honours, so a retry after a timeout never charges twice.
 */
export interface ChargeRequest {
  /** Stable across retries of the same logical charge. */
  idempotencyKey: string;
  amountCents: number;
  currency: string;
  /** What is bought, for the provider's records. */
  description: string;
  merchantId?: string;
}

export type ChargeOutcome =
  | { status: 'succeeded'; providerReference: string }
  | { status: 'declined'; providerReference: string; reason: string }
  | { status: 'failed'; reason: string; retryable: boolean };

export abstract class SettlementProvider {
  abstract readonly name: string;
  abstract charge(request: ChargeRequest): Promise<ChargeOutcome>;
  /** Looks up what happened to an earlier charge (reconciles an unknown outcome). */
  abstract lookup(idempotencyKey: string): Promise<ChargeOutcome | null>;
}
