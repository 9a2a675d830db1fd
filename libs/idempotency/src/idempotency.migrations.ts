import type { Migration } from '@app/event-store';

/**
 * One row per (organization, key): claimed `in_progress` by the request that inserted it (with a
 * lease the claimant keeps renewing), then `completed` with the response to replay. Rows are
 * kept 24 h (`expires_at`); expired rows are ignored, overwritten by a new claim, and purged.
 * `caller` is who made the first request (`api_key:<id>`, `user:<id>`, a lane identity): only
 * that caller gets its response replayed. NULL on rows written before it was recorded.
 */
export const idempotencyMigrations: Migration[] = [
  {
    id: 'idempotency_001_keys',
    sql: `
      CREATE TABLE IF NOT EXISTS idempotency_keys (
        organization_id  text NOT NULL,
        key              text NOT NULL,
        request_hash     text NOT NULL,
        method_path      text NOT NULL,
        status           text NOT NULL CHECK (status IN ('in_progress', 'completed')),
        claim_token      uuid,
        locked_until     timestamptz,
        response_status  integer,
        -- true: the stored response is a thrown AppError, replayed by throwing it again
        response_error   boolean NOT NULL DEFAULT false,
        response_body    json,
        response_headers json,
        created_at       timestamptz NOT NULL,
        expires_at       timestamptz NOT NULL,
        PRIMARY KEY (organization_id, key)
      );
      CREATE INDEX IF NOT EXISTS idempotency_keys_expires_at ON idempotency_keys (expires_at);
    `,
  },
  {
    id: 'idempotency_002_caller',
    sql: `ALTER TABLE idempotency_keys ADD COLUMN IF NOT EXISTS caller text;`,
  },
];
