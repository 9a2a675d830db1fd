import type { SqlDatabase } from '@app/event-store';
import type { SpendLedger } from '../policies/spend-ledger';

/** Spend per cap window as the transactions recorded it (the transactions projection keeps it); the policy simulation reads it. */
export class RecordedSpendLedger implements SpendLedger {
  constructor(private readonly db: SqlDatabase) {}

  async spent(orgId: string, window: { key: string }): Promise<number> {
    const [row] = await this.db.query<{ reserved_cents: string | number }>('SELECT reserved_cents FROM commerce_spend WHERE organization_id = $1 AND cap_key = $2', [
      orgId,
      window.key,
    ]);
    return Number(row?.reserved_cents ?? 0);
  }
}
