import type { Migration } from '@app/event-store';

/** Read models of the access streams, kept in step with them inside the appending transaction. */
export const accessMigrations: Migration[] = [
  {
    id: 'access_001_orgs_and_keys',
    sql: `
      CREATE TABLE IF NOT EXISTS organizations (
        org_id     text PRIMARY KEY,
        name       text NOT NULL,
        kind       text NOT NULL,
        created_at timestamptz NOT NULL
      );
      CREATE TABLE IF NOT EXISTS api_keys (
        key_id      text PRIMARY KEY,
        org_id      text NOT NULL REFERENCES organizations (org_id),
        mode        text NOT NULL,
        scopes      text[] NOT NULL,
        secret_hash text NOT NULL,
        name        text,
        created_at  timestamptz NOT NULL,
        expires_at  timestamptz,
        revoked_at  timestamptz
      );
      CREATE INDEX IF NOT EXISTS api_keys_org ON api_keys (org_id, created_at);
    `,
  },
  {
    // Who holds a key, for separation of duties between requesters and reviewers.
    id: 'access_002_key_owner',
    sql: `ALTER TABLE api_keys ADD COLUMN IF NOT EXISTS owner text;`,
  },
  {
    // Who created a key (a key id, user:<id>, operator): a key and its creator chain are one reviewer.
    id: 'access_003_key_created_by',
    sql: `ALTER TABLE api_keys ADD COLUMN IF NOT EXISTS created_by text;`,
  },
];
