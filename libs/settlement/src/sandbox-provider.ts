import { createHash } from 'node:crypto';
import { ChargeOutcome, ChargeRequest, SettlementProvider } from './settlement-provider.port';

/**
 * The sandbox provider completes at once, deterministically, like card-network test numbers:
 * - amount ending in 02 cents (e.g. 1002): declined (`insufficient_funds`);
 * - amount ending in 05 cents: fails, retryable (`provider_unavailable`);
 * - anything else: succeeds.
 * The same idempotency key always gets the first outcome back, and the reference is derived
 * from it, so a retried charge is recognisably the same charge.
 */
export class SandboxSettlementProvider extends SettlementProvider {
  readonly name = 'sandbox';
  private readonly outcomes = new Map<string, ChargeOutcome>();

  async charge(request: ChargeRequest): Promise<ChargeOutcome> {
    const earlier = this.outcomes.get(request.idempotencyKey);
    if (earlier) return earlier;
    const reference = `sbx_${createHash('sha256').update(request.idempotencyKey).digest('hex').slice(0, 24)}`;
    const cents = request.amountCents % 100;
    const outcome: ChargeOutcome =
      cents === 2
        ? { status: 'declined', providerReference: reference, reason: 'insufficient_funds' }
        : cents === 5
          ? { status: 'failed', reason: 'provider_unavailable', retryable: true }
          : { status: 'succeeded', providerReference: reference };
    if (outcome.status !== 'failed') this.outcomes.set(request.idempotencyKey, outcome);
    return outcome;
  }

  async lookup(idempotencyKey: string): Promise<ChargeOutcome | null> {
    return this.outcomes.get(idempotencyKey) ?? null;
  }
}
