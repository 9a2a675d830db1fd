import type { RecordedEvent } from '@app/event-store';
import type { AuthorizationRequest } from '../domain/authorization-request';
import type { Decision, ReasonCode } from '../domain/evaluate';
import type { LifecycleEventType, TransactionStatus } from '../domain/lifecycle';
import type { SignedRecord } from '../receipts/signed-record';

/**
 * The commerce event contract: one stream per transaction, event types named as the spec's
 * webhook event_types, each carrying the lifecycle status it leads to. Webhooks and the SDK's
 * timeline verifier consume exactly these shapes. A terminal stream ends with one more event,
 * `timeline.anchored` (domain/timeline-anchor.ts): no state change and no webhook event type.
 */
export const transactionStream = (transactionId: string) => `transaction-${transactionId}`;
export const TRANSACTION_ID_RE = /^txn_[0-9a-f]{32}$/;
export const AUTHORIZATION_ID_RE = /^auth_[0-9a-f]{32}$/;

export type KeyMode = 'live' | 'test';

/** An amount held against one spend-cap window (released on rejection or expiry). */
export interface Reservation {
  cap_key: string;
  amount_cents: number;
}

/** The spend a cap window held just before this decision, so replay can reproduce it. */
export interface SpendSnapshot {
  cap_key: string;
  limit_cents: number;
  spent_before_cents: number;
}

interface Base {
  transaction_id: string;
  authorization_id: string;
  organization_id: string;
  status: TransactionStatus;
}

export interface AuthorizationRequested extends Base {
  request: AuthorizationRequest;
  policy_id: string;
  policy_version: number | null;
  policy_hash: string | null;
  mode: KeyMode;
  provider: string;
}

/** authorization.approved, authorization.escalated, or the policy's authorization.rejected. */
export interface AuthorizationDecided extends Base {
  decision: Decision;
  reason_code: ReasonCode | null;
  policy_id: string;
  policy_hash: string | null;
  /** The instant the policy was evaluated at (expiry and cap windows depend on it). */
  evaluated_at: string;
  spend: SpendSnapshot[];
  reservations: Reservation[];
  /** The signed record of this decision (payment_decision.v1), so a refusal can be proven too. */
  decision_record: SignedRecord;
  rejected_by?: 'policy';
}

export interface AuthorizationHumanApproved extends Base {
  approver: string;
  note: string | null;
  amount_cents: number;
  released: Reservation[];
}

export interface AuthorizationHumanOrExpiryRejected extends Base {
  decision: 'blocked';
  reason_code: ReasonCode | 'REJECTED_BY_REVIEWER';
  rejected_by: 'human' | 'expiry';
  approver?: string;
  note?: string | null;
  released: Reservation[];
}

export interface ExecutionInitiated extends Base {
  attempt: number;
  provider: string;
  provider_idempotency_key: string;
  amount_cents: number;
}

export interface ExecutionSucceeded extends Base {
  attempt: number;
  provider: string;
  provider_reference: string;
  amount_cents: number;
}

export interface ExecutionFailed extends Base {
  attempt: number;
  provider: string;
  error_code: string;
  retryable: boolean;
  /** True when nothing may follow (a decline): the transaction is `declined`. Absent on events before it existed. */
  final?: boolean;
}

export interface ReceiptIssued extends Base {
  receipt_hash: string;
  key_id: string;
  receipt: SignedRecord;
}

export type TransactionEvent = RecordedEvent<Base & Record<string, unknown>> & { type: LifecycleEventType };
