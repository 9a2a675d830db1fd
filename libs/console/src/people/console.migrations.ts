import type { Migration } from '@app/event-store';

/** Read models of the console's streams (people, sessions, sign-in links), kept by the console projection. */
export const consoleMigrations: Migration[] = [
  {
    id: 'console_001_users_sessions_links',
    sql: `
      CREATE TABLE IF NOT EXISTS console_users (
        user_id       text PRIMARY KEY,
        org_id        text NOT NULL,
        email         text NOT NULL UNIQUE,
        display_name  text NOT NULL,
        role          text NOT NULL,
        password_hash text,
        invited_by    text NOT NULL,
        created_at    timestamptz NOT NULL,
        updated_at    timestamptz NOT NULL
      );
      CREATE INDEX IF NOT EXISTS console_users_org ON console_users (org_id, created_at);
      CREATE TABLE IF NOT EXISTS console_sessions (
        session_id     text PRIMARY KEY,
        token_hash     text NOT NULL UNIQUE,
        org_id         text NOT NULL,
        user_id        text NOT NULL,
        method         text NOT NULL,
        created_at     timestamptz NOT NULL,
        expires_at     timestamptz NOT NULL,
        revoked_at     timestamptz,
        revoked_reason text
      );
      CREATE INDEX IF NOT EXISTS console_sessions_user ON console_sessions (org_id, user_id, created_at);
      CREATE TABLE IF NOT EXISTS console_sign_in_links (
        link_id     text PRIMARY KEY,
        token_hash  text NOT NULL UNIQUE,
        org_id      text NOT NULL,
        user_id     text NOT NULL,
        created_at  timestamptz NOT NULL,
        expires_at  timestamptz NOT NULL,
        redeemed_at timestamptz
      );
    `,
  },
  {
    // People can be deactivated (user.deactivated): the read model says since when.
    id: 'console_002_users_deactivated',
    sql: `ALTER TABLE console_users ADD COLUMN IF NOT EXISTS deactivated_at timestamptz;`,
  },
  {
    // An address is one user per organization (the user streams are per organization): unique by (org_id, email).
    id: 'console_003_users_email_per_org',
    sql: `
      ALTER TABLE console_users DROP CONSTRAINT IF EXISTS console_users_email_key;
      CREATE UNIQUE INDEX IF NOT EXISTS console_users_org_email ON console_users (org_id, email);
      CREATE INDEX IF NOT EXISTS console_users_email ON console_users (email);
    `,
  },
];
