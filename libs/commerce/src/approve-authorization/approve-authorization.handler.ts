import { Inject, Optional } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { Clock } from '@app/core';
import { Metrics } from '@app/metrics';
import { CommerceAuthority } from '../authorize-payment/commerce-authority';
import { COMMERCE_CLOCK } from '../transactions/commerce-clock';
import { ReviewRules } from '../transactions/review-rules';
import { decideReview } from '../transactions/decide-review';
import { TransactionRepository } from '../transactions/transaction.repository';
import { TransactionRows } from '../transactions/transaction-rows.repository';
import type { TransactionRow } from '../transactions/transaction-row';
import { ApproveAuthorizationCommand } from './approve-authorization.command';

@CommandHandler(ApproveAuthorizationCommand)
export class ApproveAuthorizationHandler implements ICommandHandler<ApproveAuthorizationCommand, TransactionRow> {
  constructor(
    readonly rows: TransactionRows,
    readonly transactions: TransactionRepository,
    @Inject(COMMERCE_CLOCK) readonly clock: Clock,
    readonly authority: CommerceAuthority,
    readonly rules: ReviewRules,
    @Optional() private readonly metrics?: Metrics,
  ) {}

  async execute(cmd: ApproveAuthorizationCommand): Promise<TransactionRow> {
    const row = await decideReview(this, { ...cmd, action: { kind: 'approve', amount_cents: cmd.amountCents, note: cmd.note } });
    // Under two approvals the first leaves the transaction waiting for the second.
    this.metrics?.authorizationReviewed(row.status === 'needs_review' ? 'approval_recorded' : 'approved');
    return row;
  }
}
