import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { isTerminal } from '../domain/lifecycle';
import { TransactionRepository } from '../transactions/transaction.repository';
import { TransactionRows } from '../transactions/transaction-rows.repository';
import { AnchorTimelinesCommand } from './anchor-timelines.command';

/**
 * Writes the anchors a terminal timeline is owed and does not have: those of transactions that
 * ended before anchors existed (the backfill, run when an api process starts), of expiries recorded
 * by a worker (which holds no signing key), and of a process that stopped between a terminal event
 * and its anchor. The read model says which (terminal, `anchored_revision` NULL); the stream's own
 * last event decides (only a terminal one is anchored, at its revision: a racing anchorer loses
 * and nothing is written twice). A timeline whose anchor was written and later removed is not
 * anchored again: the read model recorded it, and the timeline reads as truncated. Returns how
 * many it anchored.
 */
@CommandHandler(AnchorTimelinesCommand)
export class AnchorTimelinesHandler implements ICommandHandler<AnchorTimelinesCommand, number> {
  constructor(
    private readonly rows: TransactionRows,
    private readonly transactions: TransactionRepository,
  ) {}

  async execute(cmd: AnchorTimelinesCommand): Promise<number> {
    if (cmd.transactionId) {
      const row = await this.rows.byId(cmd.transactionId.orgId, cmd.transactionId.transactionId);
      const due = row !== null && isTerminal(row.status) && (row.anchored_revision ?? null) === null;
      return due && (await this.transactions.anchorIfTerminal(row.transaction_id)) ? 1 : 0;
    }
    let anchored = 0;
    let after = '';
    for (;;) {
      const page = await this.rows.dueForAnchor(after, cmd.limit);
      for (const row of page) if (await this.transactions.anchorIfTerminal(row.transaction_id)) anchored++;
      if (page.length < cmd.limit) return anchored;
      after = page[page.length - 1].transaction_id;
    }
  }
}
