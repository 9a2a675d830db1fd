import type { CapWindow } from '../domain/evaluate';

/** Injection token of the SpendLedger the policy simulation (and authorization) reads spend from. */
export const SPEND_LEDGER = Symbol('SPEND_LEDGER');

/** How much an organization has already counted against each spend-cap window (by key), in its minor units; 0 when none. */
export interface SpendLedger {
  spent(orgId: string, windows: readonly CapWindow[]): Promise<Map<string, number>>;
}

/** The default until the transaction flows record spend: nothing is spent. */
export class NoSpendLedger implements SpendLedger {
  async spent(_orgId: string, windows: readonly CapWindow[]): Promise<Map<string, number>> {
    return new Map(windows.map((w) => [w.key, 0]));
  }
}
