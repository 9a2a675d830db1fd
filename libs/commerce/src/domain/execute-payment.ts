import { DomainError } from '@app/core';
import { nextStatus, TransactionStatus } from './lifecycle';
import type { TransactionEvent } from './transaction.aggregate';

/** An attempt that reported nothing back for this long is reconciled with the provider before a retry. */
export const SETTLING_LEASE_MS = 30_000;

/** What settling a transaction decides on (the transactions read model's row, as the aggregate's snapshot). */
export interface SettlementState {
  transaction_id: string;
  authorization_id: string;
  organization_id: string;
  status: TransactionStatus;
  provider: string;
  execution_state: 'settling' | 'failed' | 'declined' | 'succeeded' | null;
  execution_attempts: number;
  last_attempt_at: string | null;
  expires_at: string;
  amount_cents: number;
  approved_amount_cents: number | null;
  currency: string;
  merchant_id: string;
  purpose_tag: string;
  delegated_authority: string | null;
  policy_id: string;
  policy_hash: string | null;
  revision: number;
}

const base = (s: SettlementState) => ({ transaction_id: s.transaction_id, authorization_id: s.authorization_id, organization_id: s.organization_id });
const settleAmount = (s: SettlementState) => s.approved_amount_cents ?? s.amount_cents;

/** Whether the transaction may be settled at all (a settled one is answered before this). */
export function assertExecutable(s: SettlementState, providerAvailable: boolean): void {
  if (s.status === 'declined' || s.execution_state === 'declined') {
    throw new DomainError('payment_declined', `the provider declined transaction ${s.transaction_id}; a declined payment is not retried`);
  }
  if (s.status !== 'authorized') {
    throw new DomainError('transaction_not_authorized', `transaction ${s.transaction_id} is ${s.status}; only an authorized transaction executes`, { status: s.status });
  }
  if (!providerAvailable) {
    throw new DomainError('provider_unavailable', 'no live settlement provider is configured; live-mode payments cannot execute (test keys settle on the sandbox)');
  }
}

/** A settling attempt whose outcome never came back may be retried only after its lease. */
export function assertSettlingLeaseOver(s: SettlementState, now: Date): void {
  const startedAt = s.last_attempt_at ? Date.parse(s.last_attempt_at) : 0;
  if (now.getTime() - startedAt < SETTLING_LEASE_MS) {
    throw new DomainError('execution_in_progress', `transaction ${s.transaction_id} is being settled; retry shortly`, undefined, 2);
  }
}

/** The next attempt: execution.initiated, keyed for the provider by the transaction id on every attempt. */
export function startAttempt(s: SettlementState, now: Date, actor: string) {
  if (Date.parse(s.expires_at) <= now.getTime()) {
    throw new DomainError('authorization_expired', `the authorization window of ${s.transaction_id} closed at ${s.expires_at}`);
  }
  const attempt = s.execution_attempts + 1;
  const amount = settleAmount(s);
  const data = { ...base(s), status: nextStatus(s.status, 'execution.initiated'), attempt, provider: s.provider, provider_idempotency_key: s.transaction_id, amount_cents: amount };
  const events: TransactionEvent[] = [{ type: 'execution.initiated', data, metadata: { actor, correlation_id: s.transaction_id } }];
  return { events, attempt, amount, key: s.transaction_id };
}

/** The provider's answer, recorded: execution.failed (retryable or a final decline) or execution.succeeded. */
export function recordSettlement(
  s: SettlementState,
  attempt: number,
  outcome: { outcome: 'succeeded'; provider_reference: string } | { outcome: 'declined'; code: string } | { outcome: 'failed'; code: string; retryable: boolean },
  actor: string,
): TransactionEvent[] {
  const metadata = { actor, correlation_id: s.transaction_id };
  if (outcome.outcome === 'succeeded') {
    const data = { ...base(s), status: nextStatus(s.status, 'execution.succeeded'), attempt, provider: s.provider, provider_reference: outcome.provider_reference, amount_cents: settleAmount(s) };
    return [{ type: 'execution.succeeded', data, metadata }];
  }
  const retryable = outcome.outcome === 'failed' && outcome.retryable;
  // A decline, or a failure the provider says not to retry, is its last word: the transaction
  // ends `declined` (webhook metadata.final: true); a retryable failure stays authorized.
  const final = !retryable;
  const data = { ...base(s), status: nextStatus(s.status, 'execution.failed', { final }), attempt, provider: s.provider, error_code: outcome.code, retryable, final };
  return [{ type: 'execution.failed', data, metadata }];
}

/** The receipt's payload: the settled facts, bound to the timeline by the hash of its execution.succeeded event. */
export function receiptPayload(s: SettlementState, providerName: string, providerReference: string, succeededHash: string, issuer: string, now: Date) {
  return {
    transaction_id: s.transaction_id,
    authorization_id: s.authorization_id,
    organization_id: s.organization_id,
    amount_cents: settleAmount(s),
    currency: s.currency,
    merchant_id: s.merchant_id,
    purpose_tag: s.purpose_tag,
    delegated_authority: s.delegated_authority,
    provider: providerName,
    provider_reference: providerReference,
    policy_id: s.policy_id,
    policy_hash: s.policy_hash,
    timeline_last_event_hash: succeededHash,
    issuer,
    issued_at: now.toISOString(),
  };
}

/** receipt.issued, carrying the signed receipt. */
export function issueReceipt(s: SettlementState, receipt: { receipt_hash?: string; signature: { key_id: string } }): TransactionEvent[] {
  const data = { ...base(s), status: nextStatus('executed', 'receipt.issued'), receipt_hash: receipt.receipt_hash, key_id: receipt.signature.key_id, receipt };
  return [{ type: 'receipt.issued', data: data as Record<string, unknown>, metadata: { actor: 'system:receipts', correlation_id: s.transaction_id } }];
}

/** The read model's row as a SettlementState (numbers as numbers, instants as ISO strings). */
export function settlementFromRow(row: Record<string, unknown>): SettlementState {
  const iso = (v: unknown) => (v === null || v === undefined ? null : new Date(v as string).toISOString());
  return {
    ...(row as unknown as SettlementState),
    execution_attempts: Number(row.execution_attempts ?? 0),
    last_attempt_at: iso(row.last_attempt_at),
    expires_at: iso(row.expires_at)!,
    amount_cents: Number(row.amount_cents),
    approved_amount_cents: row.approved_amount_cents === null || row.approved_amount_cents === undefined ? null : Number(row.approved_amount_cents),
    revision: Number(row.revision),
  };
}
