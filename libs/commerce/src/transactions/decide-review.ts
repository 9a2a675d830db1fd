import { Clock, DomainError, signedWithCurrentKey } from '@app/core';
import { retryOnConflict, WrongExpectedVersion } from '@app/event-store';
import type { Metrics } from '@app/metrics';
import { approvalsOf, reviewAuthorization, ReviewAction, transactionFromRow } from '../domain/transaction.aggregate';
import type { CommerceAuthority } from '../authorize-payment/commerce-authority';
import { REVIEW_SCHEMA, signRecord } from '../receipts/signed-record';
import type { ReviewRules } from './review-rules';
import type { TransactionRepository } from './transaction.repository';
import type { TransactionRows } from './transaction-rows.repository';
import type { TransactionRow } from './transaction-row';

/**
 * Approving and rejecting share one path: load the authorization, let the aggregate decide, save
 * at the loaded revision. A save that lost a race is decided again on what won it
 * (retryOnConflict), so racing reviewers give one outcome: once decided, the loser gets
 * authorization_not_pending with the state it lost to; when the policy requires two approvals, a
 * different reviewer's racing approval becomes the second one, and the same reviewer's is refused
 * (reviewer_already_approved).
 *
 * A review sent with an Idempotency-Key records its request's name (`request_id` in the event's
 * metadata). When a process died after recording it but before the key stored its answer, the
 * retry that takes the key over finds it in the history and answers the transaction as it is,
 * instead of refusing its own review as authorization_not_pending or reviewer_already_approved.
 */
export async function decideReview(
  deps: { rows: TransactionRows; transactions: TransactionRepository; clock: Clock; authority: CommerceAuthority; rules: ReviewRules; metrics?: Pick<Metrics, 'authorizationReviewed'> },
  cmd: { orgId: string; authorizationId: string; action: ReviewAction; actor: string; reviewerName?: string | null; requestId?: string },
): Promise<TransactionRow> {
  const notFound = () => new DomainError('not_found', `authorization ${cmd.authorizationId} not found`);
  let recordedBefore = false;
  // A review signed with a key revoked by the time it is written is refused: decided and signed again once the keys reload.
  const refusal = await signedWithCurrentKey(() => deps.authority.refresh(), () => retryOnConflict(async () => {
    const row = await deps.rows.byAuthorization(cmd.orgId, cmd.authorizationId);
    if (!row) throw notFound();
    const state = transactionFromRow(row);
    // One read: who asked (the first event), the approvals so far, and the event this review decides (the last, at the revision loaded).
    const pending = state.status === 'needs_review';
    const history = pending || cmd.requestId ? await deps.transactions.history(state.transaction_id, state.revision) : [];
    if (cmd.requestId && history.some((e) => e.metadata.request_id === cmd.requestId)) {
      recordedBefore = true;
      return null;
    }
    const [requested, decided] = [history[0], history[state.revision]];
    const prior = approvalsOf(history);
    const ruling = pending
      ? await deps.rules.ruling(row, { requesterActor: (requested?.metadata.actor as string | undefined) ?? null, reviewerActor: cmd.actor, priorApprovers: prior.map((p) => p.approver) })
      : null;
    const decision = reviewAuthorization(state, cmd.action, cmd.actor, deps.clock.now(), {
      separation: ruling?.separation ?? null,
      approvals: ruling && { required: ruling.approvalsRequired, prior, alreadyApproved: ruling.alreadyApproved, reviewerIsRequester: ruling.reviewerIsRequester },
      decidedEventHash: decided?.hash ?? '',
      issuer: deps.authority.issuer,
      reviewerName: cmd.reviewerName ?? null,
      requestId: cmd.requestId ?? null,
      signReview: (payload) => signRecord(REVIEW_SCHEMA, payload, deps.authority.sign),
    });
    try {
      await deps.transactions.save(state, decision.events);
    } catch (err) {
      // The expiry was recorded by someone else: still too late.
      if (err instanceof WrongExpectedVersion && decision.refusal) throw decision.refusal;
      throw err;
    }
    return decision.refusal;
  }), 'review');
  if (refusal) throw refusal;
  const row = await deps.rows.byAuthorization(cmd.orgId, cmd.authorizationId);
  if (!row) throw notFound();
  // Under two approvals the first leaves the transaction waiting for the second.
  if (!recordedBefore) deps.metrics?.authorizationReviewed(cmd.action.kind === 'reject' ? 'rejected' : row.status === 'needs_review' ? 'approval_recorded' : 'approved');
  return row;
}
