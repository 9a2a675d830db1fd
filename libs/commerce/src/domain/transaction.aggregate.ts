import { DomainError } from '@app/core';
import { nextStatus, TransactionStatus } from './lifecycle';

/**
 * The Transaction aggregate: one stream per transaction (`transaction-<id>`), folded from the
 * nine lifecycle events. Decisions here are pure: they return the events to append at the
 * state's revision, or throw a DomainError. The state can come from the stream or from the
 * transactions read model (a snapshot the projection keeps with every append).
 */
export interface Reservation {
  cap_key: string;
  amount_cents: number;
}

export interface TransactionState {
  transaction_id: string;
  authorization_id: string;
  organization_id: string;
  status: TransactionStatus;
  amount_cents: number;
  approved_amount_cents: number | null;
  expires_at: string;
  reservations: Reservation[];
  /** Stream revision of the last event. */
  revision: number;
}

export interface TransactionEvent {
  type: string;
  data: Record<string, unknown>;
  metadata: Record<string, string>;
}

/** The read model's row as the aggregate's state (numbers as numbers, instants as ISO strings). */
export function transactionFromRow(row: {
  transaction_id: string;
  authorization_id: string;
  organization_id: string;
  status: TransactionStatus;
  amount_cents: string | number;
  approved_amount_cents: string | number | null;
  expires_at: Date | string;
  reservations: Reservation[];
  revision: number | string;
}): TransactionState {
  return {
    transaction_id: row.transaction_id,
    authorization_id: row.authorization_id,
    organization_id: row.organization_id,
    status: row.status,
    amount_cents: Number(row.amount_cents),
    approved_amount_cents: row.approved_amount_cents === null || row.approved_amount_cents === undefined ? null : Number(row.approved_amount_cents),
    expires_at: new Date(row.expires_at).toISOString(),
    reservations: row.reservations,
    revision: Number(row.revision),
  };
}

const base = (s: TransactionState) => ({ transaction_id: s.transaction_id, authorization_id: s.authorization_id, organization_id: s.organization_id });

export type ReviewAction = { kind: 'approve'; amount_cents?: number; note: string | null } | { kind: 'reject'; note: string | null };

/** What a person's review is signed with: the hash of the timeline event it decided, the issuer and the signer. */
export interface ReviewContext {
  decidedEventHash: string;
  issuer: string;
  /** Signs the payment_review.v1 payload (the service's active key). */
  signReview: (payload: Record<string, unknown>) => unknown;
  /**
   * Separation of duties, when the policy the decision was made under requires it: who asked for
   * the payment, and whether the reviewer's key has the same owner as the requester's.
   */
  separation?: { requesterActor: string | null; sameOwner: boolean } | null;
  /**
   * When the policy requires more than one approval (`review.approvals_required`): how many, the
   * approvals already recorded, and whether this reviewer (its key, or another key of its owner)
   * gave one of them. Absent: one approval decides.
   */
  approvals?: { required: number; prior: { approver: string; amount_cents: number }[]; alreadyApproved: boolean; reviewerIsRequester?: boolean } | null;
  /** The idempotent request this review is (IdempotentRequest.requestId), recorded in its event's metadata as `request_id`. */
  requestId?: string | null;
  /** The person's display name, when a person reviews (the console); null for a key. */
  reviewerName?: string | null;
}

/**
 * A reviewer's approval that is not yet the last one the policy requires: recorded, signed, and
 * the transaction stays `needs_review`. No status changes, so it is no webhook event (the spec's
 * event types are one per state change); the timeline and GET …/decision show it.
 */
export const APPROVAL_RECORDED = 'authorization.approval_recorded';

/** The approvals recorded on a transaction's events so far (its APPROVAL_RECORDED events). */
export const approvalsOf = (events: readonly { type: string; data: unknown }[]) =>
  events.filter((e) => e.type === APPROVAL_RECORDED).map((e) => e.data as { approver: string; amount_cents: number });

/** A reviewer's identity as recorded: the actor, its key id, and the person's name (a console user's display name; null for a key). */
export const reviewerOf = (actor: string, name: string | null = null) => ({ actor, key_id: actor.startsWith('api_key:') ? actor.slice('api_key:'.length) : null, name });

/**
 * A reviewer's decision on an escalated authorization. Past its window the decision is never
 * recorded as a human one: the expiry is (`events`), and the caller is refused (`refusal`).
 */
export function reviewAuthorization(s: TransactionState, action: ReviewAction, actor: string, now: Date, ctx: ReviewContext): { events: TransactionEvent[]; refusal?: DomainError } {
  if (s.status !== 'needs_review') {
    throw new DomainError('authorization_not_pending', `authorization ${s.authorization_id} is ${s.status}, not awaiting review`, { status: s.status });
  }
  if (Date.parse(s.expires_at) <= now.getTime()) {
    return {
      events: expireAuthorization(s),
      refusal: new DomainError('authorization_expired', `the authorization window of ${s.authorization_id} closed at ${s.expires_at}`),
    };
  }
  const sep = ctx.separation;
  if (sep && (actor === sep.requesterActor || sep.sameOwner)) {
    throw new DomainError('reviewer_is_requester', `the policy requires a reviewer other than the requester of ${s.authorization_id} (not its key, nor another key of the same owner)`);
  }
  const amount = s.amount_cents;
  if (action.kind === 'approve' && action.amount_cents !== undefined && action.amount_cents > amount) {
    throw new DomainError('approval_amount_exceeds_request', `an approval may lower the amount, not raise it above ${amount}`, [{ field: 'amount_cents', message: `must be at most ${amount}` }]);
  }
  const approvals = ctx.approvals ?? { required: 1, prior: [], alreadyApproved: false };
  // Two approvals are two people besides the requester: the requester's principal never gives one.
  if (action.kind === 'approve' && approvals.required > 1 && approvals.reviewerIsRequester) {
    throw new DomainError('reviewer_is_requester', `the policy requires ${approvals.required} approvals of ${s.authorization_id} by reviewers other than its requester (its key, a key of the same owner, or a key in the same creator chain)`);
  }
  if (action.kind === 'approve' && approvals.alreadyApproved) {
    throw new DomainError(
      'reviewer_already_approved',
      `the policy requires ${approvals.required} approvals of ${s.authorization_id} by different reviewers; this reviewer (its key, or another key of its owner) already gave one`,
      { approvals_required: approvals.required, approvals_recorded: approvals.prior.length },
    );
  }
  const metadata: Record<string, string> = { actor, correlation_id: s.transaction_id, ...(ctx.requestId ? { request_id: ctx.requestId } : {}) };
  // Which approval this is, when the policy requires several (signed with the review).
  const approvalCount = approvals.required > 1 && action.kind === 'approve' ? { approval: approvals.prior.length + 1, approvals_required: approvals.required } : {};
  // The review is evidence: signed, naming the reviewer, the note, the amount and the event it decided.
  const reviewRecord = (review: 'approved' | 'rejected', approved: number | null) =>
    ctx.signReview({
      ...base(s),
      review,
      reviewer: reviewerOf(actor, ctx.reviewerName ?? null),
      note: action.note,
      requested_amount_cents: amount,
      approved_amount_cents: approved,
      decided_event_hash: ctx.decidedEventHash,
      issuer: ctx.issuer,
      reviewed_at: now.toISOString(),
      ...approvalCount,
    });
  if (action.kind === 'approve') {
    const own = action.amount_cents ?? amount;
    if (approvals.prior.length + 1 < approvals.required) {
      // Not the last approval required: recorded and signed; nothing is released until the last one.
      const data = { ...base(s), status: s.status, approver: actor, note: action.note, amount_cents: own, ...approvalCount, review_record: reviewRecord('approved', own) };
      return { events: [{ type: APPROVAL_RECORDED, data, metadata }] };
    }
    // Reviewers who approved different amounts: the lowest applies (each review signs its own).
    const approved = Math.min(own, ...approvals.prior.map((p) => p.amount_cents));
    const data = {
      ...base(s),
      status: nextStatus(s.status, 'authorization.human_approved'),
      approver: actor,
      note: action.note,
      amount_cents: approved,
      ...(approvals.prior.length > 0 ? { approvers: [...approvals.prior.map((p) => p.approver), actor] } : {}),
      released: s.reservations.filter(() => approved < amount).map((r) => ({ cap_key: r.cap_key, amount_cents: amount - approved })),
      review_record: reviewRecord('approved', own),
    };
    return { events: [{ type: 'authorization.human_approved', data, metadata }] };
  }
  const data = rejection(s, 'REJECTED_BY_REVIEWER', 'human', { approver: actor, note: action.note, review_record: reviewRecord('rejected', null) });
  return { events: [{ type: 'authorization.rejected', data, metadata }] };
}

/** A rejection by a reviewer or by the expiry sweep: blocked, every reservation released. */
const rejection = (s: TransactionState, reasonCode: 'REJECTED_BY_REVIEWER' | 'EXPIRED', rejectedBy: 'human' | 'expiry', extra: Record<string, unknown> = {}) => ({
  ...base(s),
  status: nextStatus(s.status, 'authorization.rejected'),
  decision: 'blocked',
  reason_code: reasonCode,
  rejected_by: rejectedBy,
  ...extra,
  released: held(s),
});

/** What the reservations still hold: all of it, or the approved amount once a reviewer lowered it. */
const held = (s: TransactionState): Reservation[] =>
  s.reservations.map((r) => ({ cap_key: r.cap_key, amount_cents: s.approved_amount_cents === null ? r.amount_cents : Math.min(r.amount_cents, s.approved_amount_cents) }));

/**
 * An authorization whose window closed: rejected with EXPIRED by the system, its reservations
 * released. Escalated, it ends `rejected`; authorized but never executed, it ends `expired`.
 */
export function expireAuthorization(s: TransactionState): TransactionEvent[] {
  const data = rejection(s, 'EXPIRED', 'expiry');
  return [{ type: 'authorization.rejected', data, metadata: { actor: 'system:expiry-sweep', correlation_id: s.transaction_id } }];
}
