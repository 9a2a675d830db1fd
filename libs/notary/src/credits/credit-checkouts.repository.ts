import type { SqlDatabase } from '@app/event-store';

/** A checkout charged (or about to be) with no outcome recorded, or one whose outcome stayed unknown. */
export interface UnsettledCheckout {
  checkout_id: string;
  org_id: string;
  credits: number;
  provider_key: string;
}

/** Reads of the credit checkouts read model (written only by creditCheckoutsProjection). */
export abstract class CreditCheckouts {
  /** The oldest unsettled checkouts started before `before`, at most `limit`. */
  abstract unsettled(before: Date, limit: number): Promise<UnsettledCheckout[]>;
}

export class SqlCreditCheckouts extends CreditCheckouts {
  constructor(private readonly db: SqlDatabase) {
    super();
  }

  unsettled(before: Date, limit: number): Promise<UnsettledCheckout[]> {
    return this.db.query<UnsettledCheckout>(
      `SELECT checkout_id, org_id, credits, provider_key FROM notary_credit_checkouts
       WHERE status IN ('pending', 'unknown') AND started_at < $1 ORDER BY started_at LIMIT $2`,
      [before.toISOString(), limit],
    );
  }
}
