import { createHash } from 'node:crypto';
import { LedgerRow, SandboxLedger } from './sandbox-ledger.repository';
import { SANDBOX_DECLINE_CODE, SANDBOX_FAILURE_CODE, sandboxBehaviour } from './sandbox-rules';
import { LookupResult, SettleOutcome, SettlementProvider, SettleRequest } from './settlement-provider.port';

/** Derived from the key, so a retried settlement is recognisably the same one. */
export const sandboxReference = (idempotencyKey: string) => `sbx_${createHash('sha256').update(idempotencyKey).digest('hex').slice(0, 24)}`;

const recorded = (row: LedgerRow): Exclude<LookupResult, { outcome: 'not_found' }> =>
  row.outcome === 'succeeded'
    ? { outcome: 'succeeded', provider_reference: row.provider_reference! }
    : row.outcome === 'declined'
      ? { outcome: 'declined', code: row.code! }
      : { outcome: 'failed', code: row.code!, retryable: true };

/**
 * The sandbox provider: settles at once, deterministically (the rules are in sandbox-rules.ts
 * and the README). Its ledger is a table (SandboxLedger), not memory, so the same key never
 * settles twice even when retries land on different processes, and `lookup` answers on every
 * process.
 */
export class SandboxSettlementProvider extends SettlementProvider {
  readonly name = 'sandbox';

  constructor(private readonly ledger: SandboxLedger) {
    super();
  }

  async settle(request: SettleRequest): Promise<SettleOutcome> {
    const invalid = invalidRequest(request);
    if (invalid) return { outcome: 'failed', code: invalid, retryable: false };
    const key = request.idempotency_key;
    const behaviour = sandboxBehaviour(request.amount_cents, request.merchant_id);
    const reference = sandboxReference(key);
    const first =
      behaviour === 'decline'
        ? { outcome: 'declined', code: SANDBOX_DECLINE_CODE, ref: null }
        : behaviour === 'fail_once'
          ? { outcome: 'failed', code: SANDBOX_FAILURE_CODE, ref: null }
          : { outcome: 'succeeded', code: null, ref: reference }; // a timeout settles too

    const inserted = await this.ledger.claim(key, request, first);
    if (inserted) return behaviour === 'timeout' ? { outcome: 'unknown' } : recorded(inserted);

    const existing = (await this.ledger.find(key))!;
    if (
      Number(existing.amount_cents) !== request.amount_cents ||
      existing.currency !== request.currency ||
      existing.merchant_id !== request.merchant_id
    ) {
      // As real providers do: a key is bound to its first request's parameters.
      return { outcome: 'failed', code: 'idempotency_key_reused', retryable: false };
    }
    if (existing.outcome !== 'failed') return recorded(existing);
    // A retry after the transient failure: it goes through now, once however many race.
    const retried = await this.ledger.settleRetry(key, reference);
    if (retried) return recorded(retried);
    return (await this.lookup(key)) as SettleOutcome;
  }

  async lookup(idempotencyKey: string): Promise<LookupResult> {
    const row = await this.ledger.find(idempotencyKey);
    return row ? recorded(row) : { outcome: 'not_found' };
  }
}

function invalidRequest(r: SettleRequest): string | null {
  if (typeof r.idempotency_key !== 'string' || r.idempotency_key.length === 0 || r.idempotency_key.length > 255) return 'invalid_idempotency_key';
  if (!Number.isSafeInteger(r.amount_cents) || r.amount_cents <= 0) return 'invalid_amount';
  if (typeof r.currency !== 'string' || !/^[A-Z]{3}$/.test(r.currency)) return 'invalid_currency';
  if (typeof r.merchant_id !== 'string' || r.merchant_id.length === 0) return 'invalid_merchant';
  if (typeof r.reference !== 'string') return 'invalid_reference';
  return null;
}
