import { PeriodicSweep, SweepDue, SweepLogger } from '@app/core';

/**
 * Rejects escalated authorizations whose window has closed, on a timer, in every worker
 * process. Several sweepers may run at once: each rejection is appended at the transaction's
 * expected revision, so a reviewer and a sweeper (or two sweepers) produce exactly one outcome.
 */
export class ExpirySweep extends PeriodicSweep {
  constructor(expireDue: SweepDue, intervalMs: number, logger: SweepLogger, extra: Array<() => Promise<unknown>> = [], name = 'expiry sweep') {
    super(expireDue, intervalMs, logger, extra, name);
  }
}
