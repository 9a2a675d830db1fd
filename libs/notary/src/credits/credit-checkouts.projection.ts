import { InlineProjection, RowChange } from '@app/event-store';
import { CREDITS_STREAM_PREFIX, NOTARY_CREDITS_PURCHASED } from '../certificates/certificate.projection';
import {
  CreditsCheckoutFailedData,
  CreditsCheckoutStartedData,
  CreditsPurchasedData,
  NOTARY_CREDITS_CHECKOUT_FAILED,
  NOTARY_CREDITS_CHECKOUT_STARTED,
  OUTCOME_UNKNOWN,
} from '../domain/credits.aggregate';

/**
 * Each credits checkout and where it stands: `pending` (charged or about to be, no outcome
 * recorded), `unknown` (the provider did not say in time), `completed`, `declined`, `failed`.
 * The reconciliation reads the pending and unknown ones; written in the append's own statement.
 */
export const creditCheckoutsProjection: InlineProjection = {
  name: 'credit_checkouts',
  filter: { eventTypes: [NOTARY_CREDITS_CHECKOUT_STARTED, NOTARY_CREDITS_PURCHASED, NOTARY_CREDITS_CHECKOUT_FAILED] },
  tables: ['notary_credit_checkouts'],
  apply(event): RowChange[] {
    const org_id = event.stream_id.slice(CREDITS_STREAM_PREFIX.length);
    const at = event.recorded_at;
    if (event.type === NOTARY_CREDITS_CHECKOUT_STARTED) {
      const d = event.data as CreditsCheckoutStartedData;
      const row = { checkout_id: d.checkout_id, org_id, credits: d.credits, amount_cents: d.amount_cents, provider_key: d.provider_key, status: 'pending', started_at: at, updated_at: at };
      return [{ op: 'insert', table: 'notary_credit_checkouts', key: ['checkout_id'], row, onConflict: 'nothing' }];
    }
    if (event.type === NOTARY_CREDITS_PURCHASED) {
      const d = event.data as CreditsPurchasedData;
      const row = { checkout_id: d.checkout_id, org_id, credits: d.credits, status: 'completed', updated_at: at };
      return [{ op: 'insert', table: 'notary_credit_checkouts', key: ['checkout_id'], row, onConflict: { update: ['status', 'updated_at'] } }];
    }
    const d = event.data as CreditsCheckoutFailedData;
    const status = d.reason === OUTCOME_UNKNOWN ? 'unknown' : d.status;
    return [{ op: 'insert', table: 'notary_credit_checkouts', key: ['checkout_id'], row: { checkout_id: d.checkout_id, org_id, status, updated_at: at }, onConflict: { update: ['status', 'updated_at'] } }];
  },
};
