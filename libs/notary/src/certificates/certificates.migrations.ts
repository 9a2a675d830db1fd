import type { Migration } from '@app/event-store';

export const certificateMigrations: Migration[] = [
  {
    id: 'notary_002_certificates',
    sql: `
      CREATE TABLE IF NOT EXISTS certificates (
        certificate_id uuid PRIMARY KEY,
        org_id         text NOT NULL,
        schema_version text NOT NULL,
        payload        json NOT NULL,
        signature      text NOT NULL,
        key_id         uuid NOT NULL,
        dataset_hash   text NOT NULL,
        issued_at      timestamptz NOT NULL
      );
      CREATE INDEX IF NOT EXISTS certificates_org ON certificates (org_id);
      CREATE INDEX IF NOT EXISTS certificates_hash ON certificates (dataset_hash);
    `,
  },
  {
    id: 'notary_003_prediction_manifests',
    sql: `
      CREATE TABLE IF NOT EXISTS prediction_manifests (
        certificate_id    uuid PRIMARY KEY REFERENCES certificates (certificate_id),
        manifest_hash     text NOT NULL,
        prediction_hashes json NOT NULL
      );
    `,
  },
  {
    // Imported legacy certificates: served and verified like issued ones, never counted against the free quota.
    id: 'notary_006_imported_certificates',
    sql: `ALTER TABLE certificates ADD COLUMN IF NOT EXISTS imported boolean NOT NULL DEFAULT false;`,
  },
];
