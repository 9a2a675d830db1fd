import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { Clock, DomainError, signedWithCurrentKey } from '@app/core';
import { WrongExpectedVersion } from '@app/event-store';
import type { LookupResult, SettlementProvider, SettleOutcome } from '@app/settlement';
import { assertExecutable, assertSettlingLeaseOver, issueReceipt, receiptPayload, recordSettlement, SettlementState, settlementFromRow, startAttempt } from '../domain/execute-payment';
import { CommerceAuthority } from '../authorize-payment/commerce-authority';
import { RECEIPT_SCHEMA, SignedRecord, signRecord } from '../receipts/signed-record';
import { COMMERCE_CLOCK } from '../transactions/commerce-clock';
import { TransactionRepository } from '../transactions/transaction.repository';
import { TransactionRows } from '../transactions/transaction-rows.repository';
import type { TransactionRow } from '../transactions/transaction-row';
import { ExecutePaymentCommand } from './execute-payment.command';

export const SETTLEMENT_PROVIDERS = Symbol('SETTLEMENT_PROVIDERS');

/** The providers payments settle through, by the name a transaction records. `cdp_test_` keys settle only on `sandbox`. */
export type SettlementProviders = Partial<Record<string, SettlementProvider>>;

export interface ExecutionResult {
  outcome: 'succeeded' | 'declined' | 'failed' | 'already_executed';
  transaction: TransactionRow;
  receipt?: SignedRecord;
  error_code?: string;
  retryable?: boolean;
}

type Settled = Exclude<SettleOutcome | LookupResult, { outcome: 'unknown' } | { outcome: 'not_found' }>;

/**
 * Load, let the aggregate decide each step, save at the loaded revision. The provider key is the
 * transaction id on every attempt, so a retry after a timeout can never settle twice; an attempt
 * whose outcome never came back is reconciled with the provider first. A success is recorded, then
 * its receipt (bound to the success event's hash); a transaction left executed without a receipt
 * (a crash between the two) gets it on the next execute. A receipt signed with a key revoked by
 * the time it is written is signed again once the keys reload (then 409 concurrent_modification;
 * the next execute issues it).
 */
@CommandHandler(ExecutePaymentCommand)
export class ExecutePaymentHandler implements ICommandHandler<ExecutePaymentCommand, ExecutionResult> {
  constructor(
    private readonly rows: TransactionRows,
    private readonly transactions: TransactionRepository,
    @Inject(SETTLEMENT_PROVIDERS) private readonly providers: SettlementProviders,
    private readonly authority: CommerceAuthority,
    @Inject(COMMERCE_CLOCK) private readonly clock: Clock,
  ) {}

  async execute(cmd: ExecutePaymentCommand): Promise<ExecutionResult> {
    const load = async () => {
      const row = await this.rows.byId(cmd.orgId, cmd.transactionId);
      if (!row) throw new DomainError('not_found', `transaction ${cmd.transactionId} not found`);
      return { row, state: settlementFromRow(row as unknown as Record<string, unknown>) };
    };
    let { row, state } = await load();
    if (row.status === 'receipt_issued') return { outcome: 'already_executed', transaction: row, receipt: (await this.transactions.receipt(row.transaction_id)) ?? undefined };
    const provider = this.providers[state.provider];
    if (row.status === 'executed') return this.receiptAfterCrash(cmd, state, provider);
    assertExecutable(state, provider !== undefined);
    if (state.execution_state === 'settling') {
      const known = await provider!.lookup(state.transaction_id);
      if (known.outcome !== 'not_found') return this.record(cmd, state, provider!, state.execution_attempts, known as Settled);
      assertSettlingLeaseOver(state, this.clock.now());
    }
    const start = startAttempt(state, this.clock.now(), cmd.actor);
    try {
      await this.transactions.save(state, start.events);
    } catch (err) {
      if (err instanceof WrongExpectedVersion) throw new DomainError('execution_in_progress', `transaction ${cmd.transactionId} changed concurrently; retry shortly`, undefined, 1);
      throw err;
    }
    ({ row, state } = await load());
    let outcome: SettleOutcome | LookupResult;
    try {
      outcome = await provider!.settle({ idempotency_key: start.key, amount_cents: start.amount, currency: state.currency, merchant_id: state.merchant_id, reference: state.transaction_id });
    } catch {
      outcome = { outcome: 'unknown' };
    }
    // No answer in time: the provider may have settled it. Ask before recording anything.
    if (outcome.outcome === 'unknown') outcome = await provider!.lookup(start.key).catch(() => ({ outcome: 'not_found' }) as const);
    if (outcome.outcome === 'not_found') outcome = { outcome: 'failed', code: 'provider_outcome_unknown', retryable: true };
    return this.record(cmd, state, provider!, start.attempt, outcome as Settled);
  }

  private async record(cmd: ExecutePaymentCommand, state: SettlementState, provider: SettlementProvider, attempt: number, outcome: Settled): Promise<ExecutionResult> {
    const saved = await this.transactions.save(state, recordSettlement(state, attempt, outcome, cmd.actor));
    if (outcome.outcome !== 'succeeded') {
      const retryable = outcome.outcome === 'failed' && outcome.retryable;
      return { outcome: outcome.outcome, transaction: (await this.rows.byId(cmd.orgId, cmd.transactionId))!, error_code: outcome.code, retryable };
    }
    const succeeded = saved.events[saved.events.length - 1];
    return this.issue(cmd, { ...state, status: 'executed', revision: succeeded.revision }, provider, outcome.provider_reference, succeeded.hash);
  }

  private async issue(cmd: ExecutePaymentCommand, executed: SettlementState, provider: SettlementProvider, reference: string, succeededHash: string): Promise<ExecutionResult> {
    // A receipt signed with a key revoked by the time it is written is refused: signed again once the keys reload.
    const receipt = await signedWithCurrentKey(
      () => this.authority.refresh(),
      async () => {
        const signed = signRecord(RECEIPT_SCHEMA, receiptPayload(executed, provider.name, reference, succeededHash, this.authority.issuer, this.clock.now()), this.authority.sign);
        await this.transactions.save(executed, issueReceipt(executed, signed));
        return signed;
      },
      'receipt',
    );
    return { outcome: 'succeeded', transaction: (await this.rows.byId(cmd.orgId, cmd.transactionId))!, receipt };
  }

  /** Executed but no receipt: the process stopped between the two appends. Issue it now, once. */
  private async receiptAfterCrash(cmd: ExecutePaymentCommand, state: SettlementState, provider: SettlementProvider | undefined): Promise<ExecutionResult> {
    const succeeded = await this.transactions.lastEvent(state.transaction_id);
    if (!provider || succeeded?.type !== 'execution.succeeded') throw new DomainError('execution_in_progress', `transaction ${cmd.transactionId} is being recorded; retry shortly`, undefined, 1);
    const reference = (succeeded.data as { provider_reference: string }).provider_reference;
    try {
      const result = await this.issue(cmd, state, provider, reference, succeeded.hash);
      return { ...result, outcome: 'already_executed' };
    } catch (err) {
      if (!(err instanceof WrongExpectedVersion)) throw err;
      const row = (await this.rows.byId(cmd.orgId, cmd.transactionId))!;
      return { outcome: 'already_executed', transaction: row, receipt: (await this.transactions.receipt(row.transaction_id)) ?? undefined };
    }
  }
}
