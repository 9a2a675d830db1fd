import { Inject, Optional } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { Clock } from '@app/core';
import { WrongExpectedVersion } from '@app/event-store';
import { Metrics } from '@app/metrics';
import { expireAuthorization, transactionFromRow } from '../domain/transaction.aggregate';
import { COMMERCE_CLOCK } from '../transactions/commerce-clock';
import { TransactionRepository } from '../transactions/transaction.repository';
import { TransactionRows } from '../transactions/transaction-rows.repository';
import { ExpireAuthorizationsCommand } from './expire-authorizations.command';

/**
 * Each due authorization is rejected with EXPIRED by the system (never as a human decision), at
 * the revision it was found at: a reviewer or another sweeper who got there first wins. Returns
 * how many it expired. Needs no signing key, so the worker role runs it alone.
 */
@CommandHandler(ExpireAuthorizationsCommand)
export class ExpireAuthorizationsHandler implements ICommandHandler<ExpireAuthorizationsCommand, number> {
  constructor(
    private readonly rows: TransactionRows,
    private readonly transactions: TransactionRepository,
    @Inject(COMMERCE_CLOCK) private readonly clock: Clock,
    @Optional() private readonly metrics?: Metrics,
  ) {}

  async execute(cmd: ExpireAuthorizationsCommand): Promise<number> {
    let expired = 0;
    for (const row of await this.rows.dueForExpiry(this.clock.now(), cmd.limit)) {
      const state = transactionFromRow(row);
      try {
        await this.transactions.save(state, expireAuthorization(state));
        expired++;
      } catch (err) {
        if (!(err instanceof WrongExpectedVersion)) throw err;
      }
    }
    this.metrics?.authorizationsExpired(expired);
    return expired;
  }
}
