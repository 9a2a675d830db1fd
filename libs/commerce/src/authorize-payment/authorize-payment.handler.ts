import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { Clock, DomainError, prefixedIdFor, signedWithCurrentKey } from '@app/core';
import { ReadModelConstraintViolated, WrongExpectedVersion } from '@app/event-store';
import { capWindows, CapWindow } from '../domain/evaluate';
import { AuthorizationDecisionView, decisionViewOf, requestAuthorization } from '../domain/request-authorization';
import { DECISION_SCHEMA, signRecord } from '../receipts/signed-record';
import { COMMERCE_CLOCK } from '../transactions/commerce-clock';
import { SPEND_LEDGER, SpendLedger } from '../policies/spend-ledger';
import { SPEND_CAP_CONSTRAINT } from '../transactions/transaction.projection';
import { TransactionRepository } from '../transactions/transaction.repository';
import { AuthorizePaymentCommand } from './authorize-payment.command';
import { CommerceAuthority } from './commerce-authority';

export const CURRENT_POLICIES = Symbol('CURRENT_POLICIES');

/** The organization's current version of a policy (read on every decision; lookups of one moment share a query). */
export interface CurrentPolicies {
  current(orgId: string, policyId: string): Promise<{ version: number; policy: import('../domain/policy').PolicyDocument; policy_hash: string } | null>;
}

/** The decision as answered: the view with the transaction's creation time, before its expiry. */
const answer = ({ expires_at, ...rest }: AuthorizationDecisionView, createdAt: string) => ({ ...rest, created_at: createdAt, expires_at });

/** How often a decision under a spend cap is made again after a concurrent one took the room it saw. */
const CAP_ATTEMPTS = 8;

/**
 * Load the policy, let the aggregate decide (evaluation, reservations, the signed decision
 * record), save the new transaction: decisions of the same moment share one append (group
 * commit). Under a spend cap the decision reads what each window has spent and reserves within
 * its limit; the spend table's CHECK refuses an append that a concurrent decision made overshoot,
 * and the decision is made again on the spend as it now is (so a cap is never passed, and the
 * losers of a race are decided on what is left, not refused).
 *
 * A decision whose record was signed with a key revoked by the time it is written (this process
 * had not heard of the revocation) is refused by the write, with its whole group commit: each is
 * decided and signed again once the keys reload (at most MAX_SIGNING_ATTEMPTS times, then 409
 * concurrent_modification, retryable).
 *
 * A request with an Idempotency-Key names its transaction from the request (requestId): if a
 * process died after recording the decision but before the key stored its answer, the retry
 * that takes the key over finds the transaction already there and answers its decision again,
 * rather than authorizing the same payment twice.
 */
@CommandHandler(AuthorizePaymentCommand)
export class AuthorizePaymentHandler implements ICommandHandler<AuthorizePaymentCommand, AuthorizationDecisionView & { created_at: string }> {
  constructor(
    @Inject(CURRENT_POLICIES) private readonly policies: CurrentPolicies,
    private readonly transactions: TransactionRepository,
    @Inject(SPEND_LEDGER) private readonly spend: SpendLedger,
    private readonly authority: CommerceAuthority,
    @Inject(COMMERCE_CLOCK) private readonly clock: Clock,
  ) {}

  async execute(cmd: AuthorizePaymentCommand) {
    const policyId = cmd.request.policy_id ?? 'default';
    const policy = await this.policies.current(cmd.orgId, policyId);
    const input = {
      transactionId: prefixedIdFor('txn', cmd.requestId),
      authorizationId: prefixedIdFor('auth', cmd.requestId),
      orgId: cmd.orgId,
      actor: cmd.actor,
      mode: cmd.mode,
      provider: cmd.mode === 'test' ? 'sandbox' : this.authority.liveProvider ? 'live' : 'unconfigured',
      policyId,
      policy,
      request: cmd.request,
    };
    const now = this.clock.now();
    const expired = Date.parse(cmd.request.expiration_iso) <= now.getTime();
    const windows = policy && !expired ? capWindows(policy.policy, cmd.request.currency, now) : [];
    let view: AuthorizationDecisionView | undefined;
    const decide = (spent: Map<string, number>) => {
      const decision = requestAuthorization(input, { now, issuer: this.authority.issuer, windows, spent, signDecision: (p) => ({ ...signRecord(DECISION_SCHEMA, p, this.authority.sign) }) });
      view = decision.view;
      return decision.events;
    };
    let saved: { events: { recorded_at: string }[] };
    try {
      // Signed again, after the keys reload, when the record's key was revoked by the time it was written.
      saved = await signedWithCurrentKey(
        () => this.authority.refresh(),
        () => (windows.length === 0 ? this.transactions.saveNew(input.transactionId, decide(new Map())) : this.decideUnderCaps(cmd.orgId, windows, input.transactionId, decide)),
        'decision',
      );
    } catch (err) {
      if (!(cmd.requestId && err instanceof WrongExpectedVersion)) throw err;
      return this.decidedBefore(input.transactionId);
    }
    return answer(view!, saved.events[0].recorded_at);
  }

  /** The answer of the run of this request that recorded the transaction (its first two events). */
  private async decidedBefore(transactionId: string) {
    const [requested, decided] = await this.transactions.history(transactionId, 1);
    return answer(decisionViewOf(requested, decided), requested.recorded_at);
  }

  private async decideUnderCaps(orgId: string, windows: CapWindow[], transactionId: string, decide: (spent: Map<string, number>) => ReturnType<typeof requestAuthorization>['events']) {
    for (let attempt = 1; ; attempt++) {
      const spent = await this.spend.spent(orgId, windows);
      try {
        return await this.transactions.saveNewAlone(transactionId, decide(spent));
      } catch (err) {
        if (!(err instanceof ReadModelConstraintViolated && err.constraint === SPEND_CAP_CONSTRAINT)) throw err;
        if (attempt >= CAP_ATTEMPTS) throw new DomainError('concurrent_modification', 'The spend cap kept changing under concurrent authorizations; retry with the same Idempotency-Key');
      }
    }
  }
}
