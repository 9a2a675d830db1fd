import type { CapWindow } from '../domain/evaluate';

/** Injection token of the SpendLedger the policy simulation (and authorization) reads spend from. */
export const SPEND_LEDGER = Symbol('SPEND_LEDGER');

/** How much an organization has already counted against a spend-cap window, in its minor units. */
export interface SpendLedger {
  spent(orgId: string, window: CapWindow): Promise<number>;
}

/** The default until the transaction flows record spend: nothing is spent. */
export class NoSpendLedger implements SpendLedger {
  async spent(): Promise<number> {
    return 0;
  }
}
