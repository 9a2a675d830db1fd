/**
 * The SettlementProvider port: how money moves, behind one interface. Every settlement carries
 * an idempotency key that the provider honours: the same key never settles twice, so a retry
 * after a timeout or a transient failure is safe, and `lookup` tells what became of a key whose
 * outcome the caller never learnt (reconciliation).
 */
export interface SettleRequest {
  /** Stable across retries of the same logical payment. */
  idempotency_key: string;
  /** Positive integer, in the currency's minor units. */
  amount_cents: number;
  /** ISO 4217, upper case. */
  currency: string;
  merchant_id: string;
  /** Ours (e.g. the transaction id), kept in the provider's records. */
  reference: string;
}

export type SettleOutcome =
  | { outcome: 'succeeded'; provider_reference: string }
  /** Final for this key: the payment was refused. */
  | { outcome: 'declined'; code: string }
  /** Nothing was settled; `retryable`: the same key may be tried again. */
  | { outcome: 'failed'; code: string; retryable: boolean }
  /** No answer in time: it may or may not have settled; ask `lookup`. */
  | { outcome: 'unknown' };

/** What the provider recorded for a key; never `unknown`. */
export type LookupResult = Exclude<SettleOutcome, { outcome: 'unknown' }> | { outcome: 'not_found' };

export abstract class SettlementProvider {
  abstract readonly name: string;
  abstract settle(request: SettleRequest): Promise<SettleOutcome>;
  /** What happened to an earlier settlement: reconciles an `unknown` outcome. */
  abstract lookup(idempotencyKey: string): Promise<LookupResult>;
}
