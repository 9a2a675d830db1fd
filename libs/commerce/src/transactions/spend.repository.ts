import type { SqlDatabase } from '@app/event-store';
import type { SpendLedger } from '../policies/spend-ledger';

/** Spend per cap window as the transactions recorded it (the transactions projection keeps it); the policy simulation reads it. */
export class RecordedSpendLedger implements SpendLedger {
  constructor(private readonly db: SqlDatabase) {}

  /** Every window of one decision in one query. */
  async spent(orgId: string, windows: readonly { key: string }[]): Promise<Map<string, number>> {
    const spent = new Map(windows.map((w) => [w.key, 0]));
    if (windows.length === 0) return spent;
    const rows = await this.db.query<{ cap_key: string; reserved_cents: string | number }>(
      'SELECT cap_key, reserved_cents FROM commerce_spend WHERE organization_id = $1 AND cap_key = ANY($2::text[])',
      [orgId, windows.map((w) => w.key)],
      { name: 'commerce_spend_of_windows' },
    );
    for (const r of rows) spent.set(r.cap_key, Number(r.reserved_cents));
    return spent;
  }
}
