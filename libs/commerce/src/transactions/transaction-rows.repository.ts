import type { SqlDatabase } from '@app/event-store';
import type { TransactionRow } from './transaction-row';

/** Where handlers find a transaction's current state: the transactions read model (kept with every append). */
export abstract class TransactionRows {
  abstract byId(orgId: string, transactionId: string): Promise<TransactionRow | null>;
  abstract byAuthorization(orgId: string, authorizationId: string): Promise<TransactionRow | null>;
  /** Escalated authorizations whose window closed by `now`, oldest first. */
  abstract dueForExpiry(now: Date, limit: number): Promise<TransactionRow[]>;
  /** Terminal transactions whose timeline has no anchor yet, after `afterId` in id order (ended before anchors existed, or a crash between the two appends). */
  abstract dueForAnchor(afterId: string, limit: number): Promise<TransactionRow[]>;
  /** One page (limit + 1 rows, newest first) of an organization's transactions, filtered. */
  abstract page(orgId: string, f: TransactionPageFilter): Promise<TransactionRow[]>;
}

export interface TransactionPageFilter {
  status?: string;
  merchant_id?: string;
  agent?: string;
  from?: string;
  to?: string;
  limit: number;
  /** After this (created_at, transaction_id), from the keyset cursor. */
  cursor?: { at: string; id: string };
}

export class SqlTransactionRows extends TransactionRows {
  constructor(private readonly db: SqlDatabase) {
    super();
  }

  async byId(orgId: string, transactionId: string): Promise<TransactionRow | null> {
    const [row] = await this.db.query<TransactionRow>('SELECT * FROM commerce_transactions WHERE transaction_id = $1 AND organization_id = $2', [transactionId, orgId], {
      name: 'commerce_tx_by_id',
    });
    return row ?? null;
  }

  async byAuthorization(orgId: string, authorizationId: string): Promise<TransactionRow | null> {
    const [row] = await this.db.query<TransactionRow>('SELECT * FROM commerce_transactions WHERE authorization_id = $1 AND organization_id = $2', [authorizationId, orgId]);
    return row ?? null;
  }

  page(orgId: string, f: TransactionPageFilter): Promise<TransactionRow[]> {
    const params: unknown[] = [orgId];
    const where = ['organization_id = $1'];
    const add = (sql: string, value: unknown) => {
      params.push(value);
      where.push(sql.replace('?', `$${params.length}`));
    };
    if (f.status) add('status = ?', f.status);
    if (f.merchant_id) add('merchant_id = ?', f.merchant_id);
    if (f.agent) add('delegated_authority = ?', f.agent);
    if (f.from) add('created_at >= ?', f.from);
    if (f.to) add('created_at < ?', f.to);
    if (f.cursor) {
      params.push(f.cursor.at, f.cursor.id);
      where.push(`(created_at, transaction_id) < ($${params.length - 1}::timestamptz, $${params.length})`);
    }
    params.push(f.limit + 1);
    return this.db.query<TransactionRow>(
      `SELECT * FROM commerce_transactions WHERE ${where.join(' AND ')} ORDER BY created_at DESC, transaction_id DESC LIMIT $${params.length}`,
      params,
    );
  }

  dueForAnchor(afterId: string, limit: number): Promise<TransactionRow[]> {
    return this.db.query<TransactionRow>(
      `SELECT * FROM commerce_transactions WHERE anchored_revision IS NULL AND status IN ('rejected', 'declined', 'expired', 'receipt_issued') AND transaction_id > $1 ORDER BY transaction_id LIMIT $2`,
      [afterId, limit],
    );
  }

  dueForExpiry(now: Date, limit: number): Promise<TransactionRow[]> {
    // Escalated ones, and authorized ones never executed (one being settled is left to its execute).
    return this.db.query<TransactionRow>(
      `(SELECT * FROM commerce_transactions WHERE status = 'needs_review' AND expires_at <= $1 ORDER BY expires_at LIMIT $2)
       UNION ALL
       (SELECT * FROM commerce_transactions WHERE status = 'authorized' AND expires_at <= $1 AND execution_state IS DISTINCT FROM 'settling' ORDER BY expires_at LIMIT $2)
       ORDER BY expires_at LIMIT $2`,
      [now.toISOString(), limit],
    );
  }
}
