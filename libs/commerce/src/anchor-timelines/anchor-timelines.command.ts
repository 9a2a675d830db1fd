/**
 * Anchor the terminal timelines that have no anchor yet: at most `limit` per page, every page once
 * (the anchoring sweep, and the backfill of transactions that ended before anchors existed); or
 * only `transactionId`'s, when a read finds it terminal and not anchored yet.
 */
export class AnchorTimelinesCommand {
  constructor(
    readonly limit = 100,
    readonly transactionId?: { orgId: string; transactionId: string },
  ) {}
}
