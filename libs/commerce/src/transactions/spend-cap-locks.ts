import type { AppendResult, NewEvent, SqlDatabase, SqlEventStore, SqlExecutor } from '@app/event-store';
import type { CapWindow } from '../domain/evaluate';
import { transactionStream } from './transaction.events';

/**
 * Authorizations under a spend cap decide while holding the cap windows' spend rows locked, so
 * concurrent requests queue instead of overshooting a cap: lock (creating the rows first, in one
 * order, so they never deadlock), read what is spent, decide, append; the transactions projection
 * reserves the amounts in the append's statement, under the same locks. This needs the SQL
 * adapter's transactions: it is the one write path not yet on the port alone (a CHECK-constrained
 * spend counter, as the paywall's, would put it there).
 */
export class SpendCapLocks {
  constructor(
    private readonly db: SqlDatabase,
    private readonly store: SqlEventStore,
  ) {}

  async decideUnderLocks(orgId: string, windows: CapWindow[], transactionId: string, decide: (spent: Map<string, number>) => NewEvent[]): Promise<AppendResult> {
    return this.db.transaction(async (tx) => {
      const events = decide(await lockSpend(tx, orgId, windows));
      return this.store.appendIn(tx, transactionStream(transactionId), events, 'no_stream');
    });
  }
}

/**
 * Locks the spend rows of the cap windows (creating them first) in a fixed order, so concurrent
 * authorizations against one cap queue up instead of overshooting it, and never deadlock.
 */
async function lockSpend(tx: SqlExecutor, orgId: string, windows: CapWindow[]): Promise<Map<string, number>> {
  const spent = new Map<string, number>();
  if (windows.length === 0) return spent;
  const keys = [...new Set(windows.map((w) => w.key))].sort();
  await tx.query(
    `INSERT INTO commerce_spend (organization_id, cap_key, reserved_cents) SELECT $1, k, 0 FROM unnest($2::text[]) k ORDER BY k ON CONFLICT DO NOTHING`,
    [orgId, keys],
  );
  const rows = await tx.query<{ cap_key: string; reserved_cents: string | number }>(
    'SELECT cap_key, reserved_cents FROM commerce_spend WHERE organization_id = $1 AND cap_key = ANY($2::text[]) ORDER BY cap_key FOR UPDATE',
    [orgId, keys],
  );
  for (const r of rows) spent.set(r.cap_key, Number(r.reserved_cents));
  return spent;
}

