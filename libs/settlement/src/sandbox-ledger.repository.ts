import type { SqlDatabase } from '@app/event-store';

export interface LedgerRow {
  amount_cents: string | number;
  currency: string;
  merchant_id: string;
  outcome: 'succeeded' | 'declined' | 'failed';
  code: string | null;
  provider_reference: string | null;
}

const COLUMNS = 'amount_cents, currency, merchant_id, outcome, code, provider_reference';

/**
 * The sandbox provider's ledger (`sandbox_settlements`): shared by every process, so the same key
 * never settles twice. A key's row is claimed with one INSERT … ON CONFLICT; a retry after a
 * transient failure moves it to `succeeded` with one conditional UPDATE (concurrent retries settle once).
 */
export class SandboxLedger {
  constructor(private readonly db: SqlDatabase) {}

  /** The new row, or undefined when the key has one already. */
  async claim(key: string, r: { amount_cents: number; currency: string; merchant_id: string; reference: string }, first: { outcome: string; code: string | null; ref: string | null }) {
    const [inserted] = await this.db.query<LedgerRow>(
      `INSERT INTO sandbox_settlements (idempotency_key, amount_cents, currency, merchant_id, reference, outcome, code, provider_reference)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT (idempotency_key) DO NOTHING
       RETURNING ${COLUMNS}`,
      [key, r.amount_cents, r.currency, r.merchant_id, r.reference, first.outcome, first.code, first.ref],
    );
    return inserted;
  }

  async find(key: string): Promise<LedgerRow | undefined> {
    const [row] = await this.db.query<LedgerRow>(`SELECT ${COLUMNS} FROM sandbox_settlements WHERE idempotency_key = $1`, [key]);
    return row;
  }

  /** Moves a failed settlement to succeeded, once however many race; undefined when it was not failed. */
  async settleRetry(key: string, reference: string): Promise<LedgerRow | undefined> {
    const [retried] = await this.db.query<LedgerRow>(
      `UPDATE sandbox_settlements
       SET outcome = 'succeeded', code = NULL, provider_reference = $2, attempts = attempts + 1, updated_at = now()
       WHERE idempotency_key = $1 AND outcome = 'failed'
       RETURNING ${COLUMNS}`,
      [key, reference],
    );
    return retried;
  }
}
