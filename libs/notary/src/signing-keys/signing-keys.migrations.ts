import type { Migration } from '@app/event-store';

export const signingKeyMigrations: Migration[] = [
  {
    id: 'notary_001_signing_keys',
    // Public facts (a projection of the signing-keys stream) apart from the sealed private keys,
    // which never enter an event.
    sql: `
      CREATE TABLE IF NOT EXISTS signing_keys (
        key_id     uuid PRIMARY KEY,
        algorithm  text NOT NULL,
        public_key text NOT NULL,
        created_at timestamptz NOT NULL,
        status     text NOT NULL,
        retired_at timestamptz,
        revoked_at timestamptz
      );
      CREATE TABLE IF NOT EXISTS signing_key_secrets (
        key_id                uuid PRIMARY KEY REFERENCES signing_keys (key_id),
        encrypted_private_key text NOT NULL
      );
    `,
  },
  {
    id: 'notary_013_signing_key_secrets_unlinked',
    // The sealed private key is stored before its key's event is appended (the projection writes
    // signing_keys with the append, and a rebuild empties it), so it may not reference that row.
    sql: `ALTER TABLE signing_key_secrets DROP CONSTRAINT IF EXISTS signing_key_secrets_key_id_fkey;`,
  },
];
