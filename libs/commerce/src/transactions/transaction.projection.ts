import type { AppendFollowUp, RecordedEvent, SqlExecutor } from '@app/event-store';
import type { AuthorizationDecided, AuthorizationRequested, ExecutionFailed, ExecutionInitiated, ExecutionSucceeded, Reservation } from './transaction.events';

/**
 * The transactions read model and the spend held per cap window, applied inside the
 * transaction that appends the event, so the table never disagrees with the stream. Spend is
 * a projection too: decisions reserve, rejections and lowered approvals release.
 */
export async function applyTransactionEvent(tx: SqlExecutor, e: RecordedEvent): Promise<void> {
  const d = e.data as Record<string, unknown> & { transaction_id: string; organization_id: string; status: string };
  switch (e.type) {
    case 'authorization.requested': {
      const r = e.data as AuthorizationRequested;
      await tx.query(
        `INSERT INTO commerce_transactions (transaction_id, authorization_id, organization_id, status, decision, policy_id, policy_version,
           policy_hash, amount_cents, currency, merchant_id, purpose_tag, delegated_authority, expires_at, mode, provider, reservations,
           revision, created_at, updated_at)
         VALUES ($1, $2, $3, $4, 'pending', $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, '[]', $16, $17, $17)`,
        [
          r.transaction_id, r.authorization_id, r.organization_id, r.status, r.policy_id, r.policy_version, r.policy_hash,
          r.request.amount_cents, r.request.currency, r.request.merchant_id, r.request.purpose_tag, r.request.delegated_authority ?? null,
          r.request.expiration_iso, r.mode, r.provider, e.revision, e.recorded_at,
        ],
        { name: 'commerce_tx_insert' },
      );
      return;
    }
    case 'authorization.approved':
    case 'authorization.escalated':
    case 'authorization.rejected': {
      const x = e.data as AuthorizationDecided & { released?: Reservation[] };
      if (x.reservations?.length) await adjustSpend(tx, d.organization_id, x.reservations, +1);
      if (x.released?.length) await adjustSpend(tx, d.organization_id, x.released, -1);
      await tx.query(
        `UPDATE commerce_transactions SET status = $2, decision = $3, reason_code = $4,
           reservations = CASE WHEN $5::json IS NULL THEN reservations ELSE $5::json END, revision = $6, updated_at = $7
         WHERE transaction_id = $1`,
        [d.transaction_id, d.status, x.decision, x.reason_code ?? null, x.reservations ? JSON.stringify(x.reservations) : x.released ? '[]' : null, e.revision, e.recorded_at],
        { name: 'commerce_tx_decided' },
      );
      return;
    }
    case 'authorization.human_approved': {
      const x = e.data as { amount_cents: number; released: Reservation[] };
      if (x.released.length) await adjustSpend(tx, d.organization_id, x.released, -1);
      await tx.query(
        `UPDATE commerce_transactions SET status = $2, decision = 'authorized', reason_code = NULL, approved_amount_cents = $3,
           reservations = (SELECT coalesce(json_agg(json_build_object('cap_key', r->>'cap_key', 'amount_cents', $3::bigint)), '[]'::json)
                           FROM json_array_elements(reservations) r),
           revision = $4, updated_at = $5
         WHERE transaction_id = $1`,
        [d.transaction_id, d.status, x.amount_cents, e.revision, e.recorded_at],
      );
      return;
    }
    case 'execution.initiated': {
      const x = e.data as ExecutionInitiated;
      await tx.query(
        `UPDATE commerce_transactions SET execution_state = 'settling', execution_attempts = $2, last_attempt_at = $3, revision = $4, updated_at = $3
         WHERE transaction_id = $1`,
        [d.transaction_id, x.attempt, e.recorded_at, e.revision],
      );
      return;
    }
    case 'execution.failed': {
      const x = e.data as ExecutionFailed;
      await tx.query(
        `UPDATE commerce_transactions SET execution_state = $2, revision = $3, updated_at = $4 WHERE transaction_id = $1`,
        [d.transaction_id, x.retryable ? 'failed' : 'declined', e.revision, e.recorded_at],
      );
      return;
    }
    case 'execution.succeeded': {
      const x = e.data as ExecutionSucceeded;
      await tx.query(
        `UPDATE commerce_transactions SET status = $2, execution_state = 'succeeded', provider_reference = $3, revision = $4, updated_at = $5
         WHERE transaction_id = $1`,
        [d.transaction_id, d.status, x.provider_reference, e.revision, e.recorded_at],
      );
      return;
    }
    case 'receipt.issued':
      await tx.query(`UPDATE commerce_transactions SET status = $2, revision = $3, updated_at = $4 WHERE transaction_id = $1`, [
        d.transaction_id,
        d.status,
        e.revision,
        e.recorded_at,
      ]);
      return;
  }
}

/**
 * The read-model row of a new transaction, written by the append's own statement (one round trip):
 * the state after authorization.requested and its decision. Equivalent to applying both events.
 */
export function decidedTransactionRow(requested: AuthorizationRequested, decided: AuthorizationDecided): AppendFollowUp {
  const r = requested.request;
  return {
    name: 'commerce_tx_decided_row',
    sql: `INSERT INTO commerce_transactions (transaction_id, authorization_id, organization_id, status, decision, reason_code, policy_id, policy_version,
            policy_hash, amount_cents, currency, merchant_id, purpose_tag, delegated_authority, expires_at, mode, provider, reservations, revision,
            created_at, updated_at)
          SELECT :1::text, :2::text, :3::text, :4::text, :5::text, :6::text, :7::text, :8::integer, :9::text, :10::bigint, :11::text, :12::text,
                 :13::text, :14::text, :15::timestamptz, :16::text, :17::text, :18::json, stream_revision, $7::timestamptz, $7::timestamptz
          FROM appended WHERE status = 'appended'`,
    params: [
      decided.transaction_id, decided.authorization_id, decided.organization_id, decided.status, decided.decision, decided.reason_code, requested.policy_id,
      requested.policy_version, requested.policy_hash, r.amount_cents, r.currency, r.merchant_id, r.purpose_tag, r.delegated_authority ?? null, r.expiration_iso,
      requested.mode, requested.provider, JSON.stringify(decided.reservations),
    ],
  };
}

/** Spend reservations of a decision, applied to the cap windows (inside the locking transaction). */
export async function reserveSpend(tx: SqlExecutor, orgId: string, items: Reservation[]): Promise<void> {
  if (items.length) await adjustSpend(tx, orgId, items, +1);
}

async function adjustSpend(tx: SqlExecutor, orgId: string, items: Reservation[], sign: 1 | -1): Promise<void> {
  for (const r of items) {
    await tx.query(
      `INSERT INTO commerce_spend (organization_id, cap_key, reserved_cents) VALUES ($1, $2, $3)
       ON CONFLICT (organization_id, cap_key) DO UPDATE SET reserved_cents = commerce_spend.reserved_cents + EXCLUDED.reserved_cents`,
      [orgId, r.cap_key, sign * r.amount_cents],
      { name: 'commerce_spend_adjust' },
    );
  }
}

/** Spend per cap window as the transactions recorded it (the policy simulation reads it). */
export class RecordedSpendLedger {
  constructor(private readonly db: SqlExecutor) {}
  async spent(organizationId: string, window: { key: string }): Promise<number> {
    const [row] = await this.db.query<{ reserved_cents: string | number }>('SELECT reserved_cents FROM commerce_spend WHERE organization_id = $1 AND cap_key = $2', [
      organizationId,
      window.key,
    ]);
    return Number(row?.reserved_cents ?? 0);
  }
}
