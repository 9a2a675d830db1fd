import type { Migration } from '@app/event-store';

export const registryMigrations: Migration[] = [
  {
    id: 'notary_005_registry',
    sql: `
      CREATE TABLE IF NOT EXISTS registry_entries (
        id             text PRIMARY KEY,
        org_id         text NOT NULL,
        slug           text NOT NULL,
        title          text NOT NULL,
        summary        text,
        artifact_type  text NOT NULL,
        status         text NOT NULL,
        certificate_id uuid,
        artifact_hash  text,
        rows_count     integer,
        industry       text,
        tags           text[] NOT NULL DEFAULT '{}',
        visibility     text NOT NULL,
        created_at     timestamptz NOT NULL,
        updated_at     timestamptz NOT NULL,
        search         tsvector NOT NULL
      );
      CREATE INDEX IF NOT EXISTS registry_search ON registry_entries USING gin (search);
      CREATE INDEX IF NOT EXISTS registry_page ON registry_entries (visibility, created_at DESC, id DESC);
      CREATE INDEX IF NOT EXISTS registry_org ON registry_entries (org_id, created_at DESC, id DESC);
    `,
  },
];
