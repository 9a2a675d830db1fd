/** Settle the record of credits checkouts left without an outcome for `olderThanMs`, at most `limit` of them. */
export class ReconcileCreditCheckoutsCommand {
  constructor(
    readonly limit: number,
    readonly olderThanMs: number = RECONCILE_AFTER_MS,
  ) {}
}

/** Far past any provider's timeout: a checkout this old without an outcome is not in flight. */
export const RECONCILE_AFTER_MS = 10 * 60 * 1000;
/** How often every api process looks for them. */
export const RECONCILE_INTERVAL_MS = 60 * 1000;
