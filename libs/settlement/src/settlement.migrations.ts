import type { Migration } from '@app/event-store';

/** The sandbox provider's ledger: one row per idempotency key, shared by every process. */
export const settlementMigrations: Migration[] = [
  {
    id: 'settlement_001_sandbox_settlements',
    sql: `
      CREATE TABLE IF NOT EXISTS sandbox_settlements (
        idempotency_key    text PRIMARY KEY,
        amount_cents       bigint NOT NULL,
        currency           text NOT NULL,
        merchant_id        text NOT NULL,
        reference          text NOT NULL,
        outcome            text NOT NULL CHECK (outcome IN ('succeeded', 'declined', 'failed')),
        code               text,
        provider_reference text,
        attempts           integer NOT NULL DEFAULT 1,
        created_at         timestamptz NOT NULL DEFAULT now(),
        updated_at         timestamptz NOT NULL DEFAULT now()
      );
    `,
  },
];
