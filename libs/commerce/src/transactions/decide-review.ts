import { Clock, DomainError } from '@app/core';
import { WrongExpectedVersion } from '@app/event-store';
import { reviewAuthorization, ReviewAction, transactionFromRow } from '../domain/transaction.aggregate';
import type { CommerceAuthority } from '../authorize-payment/commerce-authority';
import { REVIEW_SCHEMA, signRecord } from '../receipts/signed-record';
import type { ReviewRules } from './review-rules';
import type { TransactionRepository } from './transaction.repository';
import type { TransactionRows } from './transaction-rows.repository';
import type { TransactionRow } from './transaction-row';

/**
 * Approving and rejecting share one path: load the authorization, let the aggregate decide, save
 * at the loaded revision. Racing reviewers (or the expiry sweep) give one outcome: the loser
 * gets authorization_not_pending with the state it lost to.
 */
export async function decideReview(
  deps: { rows: TransactionRows; transactions: TransactionRepository; clock: Clock; authority: CommerceAuthority; rules: ReviewRules },
  cmd: { orgId: string; authorizationId: string; action: ReviewAction; actor: string },
): Promise<TransactionRow> {
  const notFound = () => new DomainError('not_found', `authorization ${cmd.authorizationId} not found`);
  const row = await deps.rows.byAuthorization(cmd.orgId, cmd.authorizationId);
  if (!row) throw notFound();
  const state = transactionFromRow(row);
  // One read: who asked (the first event) and the event this review decides (the last, at the revision loaded).
  const pending = state.status === 'needs_review';
  const history = pending ? await deps.transactions.history(state.transaction_id, state.revision) : [];
  const [requested, decided] = [history[0], history[state.revision]];
  const separation = pending ? await deps.rules.separation(row, (requested?.metadata.actor as string | undefined) ?? null, cmd.actor) : null;
  const { events, refusal } = reviewAuthorization(state, cmd.action, cmd.actor, deps.clock.now(), {
    separation,
    decidedEventHash: decided?.hash ?? '',
    issuer: deps.authority.issuer,
    signReview: (payload) => signRecord(REVIEW_SCHEMA, payload, deps.authority.sign),
  });
  try {
    await deps.transactions.save(state, events);
  } catch (err) {
    if (!(err instanceof WrongExpectedVersion)) throw err;
    if (refusal) throw refusal; // the expiry was recorded by someone else: still too late
    const now = await deps.rows.byAuthorization(cmd.orgId, cmd.authorizationId);
    throw new DomainError('authorization_not_pending', `authorization ${cmd.authorizationId} was decided concurrently; it is now ${now?.status}`, { status: now?.status });
  }
  if (refusal) throw refusal;
  return (await deps.rows.byAuthorization(cmd.orgId, cmd.authorizationId)) ?? Promise.reject(notFound());
}
