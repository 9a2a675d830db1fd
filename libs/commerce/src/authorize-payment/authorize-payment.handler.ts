import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { Clock, newPrefixedId } from '@app/core';
import { capWindows } from '../domain/evaluate';
import { AuthorizationDecisionView, requestAuthorization } from '../domain/request-authorization';
import { DECISION_SCHEMA, signRecord } from '../receipts/signed-record';
import { COMMERCE_CLOCK } from '../transactions/commerce-clock';
import type { SpendCapLocks } from '../transactions/spend-cap-locks';
import { TransactionRepository } from '../transactions/transaction.repository';
import { AuthorizePaymentCommand } from './authorize-payment.command';
import { CommerceAuthority } from './commerce-authority';

export const SPEND_CAP_LOCKS = Symbol('SPEND_CAP_LOCKS');
export const CURRENT_POLICIES = Symbol('CURRENT_POLICIES');

/** The organization's current version of a policy (read on every decision; lookups of one moment share a query). */
export interface CurrentPolicies {
  current(orgId: string, policyId: string): Promise<{ version: number; policy: import('../domain/policy').PolicyDocument; policy_hash: string } | null>;
}

/**
 * Load the policy, let the aggregate decide (evaluation, reservations, the signed decision
 * record), save the new transaction: decisions of the same moment share one append (group
 * commit); under a spend cap the decision is made holding the cap windows' locks.
 */
@CommandHandler(AuthorizePaymentCommand)
export class AuthorizePaymentHandler implements ICommandHandler<AuthorizePaymentCommand, AuthorizationDecisionView & { created_at: string }> {
  constructor(
    @Inject(CURRENT_POLICIES) private readonly policies: CurrentPolicies,
    private readonly transactions: TransactionRepository,
    @Inject(SPEND_CAP_LOCKS) private readonly capLocks: Pick<SpendCapLocks, 'decideUnderLocks'>,
    private readonly authority: CommerceAuthority,
    @Inject(COMMERCE_CLOCK) private readonly clock: Clock,
  ) {}

  async execute(cmd: AuthorizePaymentCommand) {
    const policyId = cmd.request.policy_id ?? 'default';
    const policy = await this.policies.current(cmd.orgId, policyId);
    const input = {
      transactionId: newPrefixedId('txn'),
      authorizationId: newPrefixedId('auth'),
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
    const saved =
      windows.length === 0
        ? await this.transactions.saveNew(input.transactionId, decide(new Map()))
        : await this.capLocks.decideUnderLocks(cmd.orgId, windows, input.transactionId, decide);
    const v = view!;
    const { expires_at, ...rest } = v;
    return { ...rest, created_at: saved.events[0].recorded_at, expires_at };
  }
}
