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
    @Optional() readonly metrics?: Metrics,
  ) {}

  execute(cmd: ApproveAuthorizationCommand): Promise<TransactionRow> {
    return decideReview(this, { ...cmd, action: { kind: 'approve', amount_cents: cmd.amountCents, note: cmd.note } });
  }
}
