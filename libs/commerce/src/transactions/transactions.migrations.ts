import type { Migration } from '@app/event-store';

/**
 * Read models of the transaction streams, written in the same database transaction as the
 * events they come from: the current state of each transaction, and the spend held per cap window.
 */
export const transactionMigrations: Migration[] = [
  {
    id: 'commerce_002_transactions',
    sql: `
      CREATE TABLE IF NOT EXISTS commerce_transactions (
        transaction_id        text PRIMARY KEY,
        authorization_id      text NOT NULL UNIQUE,
        organization_id       text NOT NULL,
        status                text NOT NULL,
        decision              text NOT NULL,
        reason_code           text,
        policy_id             text NOT NULL,
        policy_version        integer,
        policy_hash           text,
        amount_cents          bigint NOT NULL,
        approved_amount_cents bigint,
        currency              text NOT NULL,
        merchant_id           text NOT NULL,
        purpose_tag           text NOT NULL,
        delegated_authority   text,
        expires_at            timestamptz NOT NULL,
        mode                  text NOT NULL,
        provider              text NOT NULL,
        provider_reference    text,
        execution_state       text,
        execution_attempts    integer NOT NULL DEFAULT 0,
        last_attempt_at       timestamptz,
        reservations          json NOT NULL,
        revision              integer NOT NULL,
        created_at            timestamptz NOT NULL,
        updated_at            timestamptz NOT NULL
      );
      CREATE INDEX IF NOT EXISTS commerce_transactions_org_created ON commerce_transactions (organization_id, created_at DESC, transaction_id DESC);
      CREATE INDEX IF NOT EXISTS commerce_transactions_org_status ON commerce_transactions (organization_id, status, created_at DESC);
      CREATE INDEX IF NOT EXISTS commerce_transactions_review_due ON commerce_transactions (expires_at) WHERE status = 'needs_review';
      CREATE TABLE IF NOT EXISTS commerce_spend (
        organization_id text NOT NULL,
        cap_key         text NOT NULL,
        reserved_cents  bigint NOT NULL DEFAULT 0,
        PRIMARY KEY (organization_id, cap_key)
      );
    `,
  },
  {
    // A reservation may not take a cap window past its limit: the limit the last reserving decision
    // was made under rides in the row (a release only lowers the total), and this constraint
    // refuses the whole append that would overshoot (SPEND_CAP_CONSTRAINT).
    id: 'commerce_003_spend_within_cap',
    sql: `
      ALTER TABLE commerce_spend ADD COLUMN IF NOT EXISTS cap_cents bigint;
      ALTER TABLE commerce_spend ADD CONSTRAINT commerce_spend_within_cap CHECK (cap_cents IS NULL OR reserved_cents <= cap_cents);
    `,
  },
  {
    // The expiry sweep also finds authorized transactions whose window closed unexecuted.
    id: 'commerce_004_authorized_due',
    sql: `CREATE INDEX IF NOT EXISTS commerce_transactions_authorized_due ON commerce_transactions (expires_at) WHERE status = 'authorized';`,
  },
  {
    // The revision of the anchor that sealed a terminal timeline (timeline.anchored); NULL: none
    // written yet. Transactions that ended before anchors existed start NULL and are anchored by
    // the anchoring sweep (AnchorTimelinesHandler), which finds them through this index.
    id: 'commerce_005_timeline_anchors',
    sql: `
      ALTER TABLE commerce_transactions ADD COLUMN IF NOT EXISTS anchored_revision integer;
      CREATE INDEX IF NOT EXISTS commerce_transactions_anchor_due ON commerce_transactions (transaction_id) WHERE anchored_revision IS NULL AND status IN ('rejected', 'declined', 'expired', 'receipt_issued');
    `,
  },
];
