import type { TransactionStatus } from '../domain/lifecycle';
import type { KeyMode, Reservation } from './transaction.events';

/** One row of the transactions read model. */
export interface TransactionRow {
  transaction_id: string;
  authorization_id: string;
  organization_id: string;
  status: TransactionStatus;
  decision: string;
  reason_code: string | null;
  policy_id: string;
  policy_version: number | null;
  policy_hash: string | null;
  amount_cents: string | number;
  approved_amount_cents: string | number | null;
  currency: string;
  merchant_id: string;
  purpose_tag: string;
  delegated_authority: string | null;
  expires_at: Date | string;
  mode: KeyMode;
  provider: string;
  provider_reference: string | null;
  execution_state: 'settling' | 'failed' | 'declined' | 'succeeded' | null;
  execution_attempts: number;
  last_attempt_at: Date | string | null;
  reservations: Reservation[];
  revision: number;
  /** The revision of the timeline's anchor (timeline.anchored); null until one is written. */
  anchored_revision?: number | null;
  created_at: Date | string;
  updated_at: Date | string;
}
