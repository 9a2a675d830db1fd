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
  {
    // Query support for filtered listings: an index that serves the filters in page order (and
    // counts them from the index alone, the text query included), and statistics that tell the
    // planner how the filter columns go together.
    id: 'notary_008_registry_filtered_page',
    sql: `
      CREATE INDEX IF NOT EXISTS registry_filtered_page
        ON registry_entries (visibility, status, artifact_type, industry, created_at DESC, id DESC) INCLUDE (search);
      CREATE STATISTICS IF NOT EXISTS registry_filters (dependencies, mcv) ON visibility, status, artifact_type, industry FROM registry_entries;
      ANALYZE registry_entries;
    `,
  },
  {
    // A version of the whole registry, moved by every statement that changes its rows (the
    // projection, an operator's fix): a listing computed at version v stays exact until it moves.
    id: 'notary_009_registry_version',
    sql: `
      CREATE TABLE IF NOT EXISTS registry_state (
        id      boolean PRIMARY KEY DEFAULT true CHECK (id),
        version bigint NOT NULL
      );
      INSERT INTO registry_state (id, version) VALUES (true, 1) ON CONFLICT (id) DO NOTHING;
      CREATE OR REPLACE FUNCTION registry_bump_version() RETURNS trigger
      LANGUAGE plpgsql AS $fn$
      BEGIN
        UPDATE registry_state SET version = version + 1;
        RETURN NULL;
      END
      $fn$;
      DROP TRIGGER IF EXISTS registry_entries_changed ON registry_entries;
      CREATE TRIGGER registry_entries_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON registry_entries
        FOR EACH STATEMENT EXECUTE FUNCTION registry_bump_version();
    `,
  },
  {
    // The text search (title, summary, tags) computed by the table itself, so the registry's
    // projection writes plain values and any path that changes a row keeps it right.
    id: 'notary_012_registry_search_generated',
    sql: `
      CREATE OR REPLACE FUNCTION registry_search_text(p_title text, p_summary text, p_tags text[]) RETURNS tsvector
      LANGUAGE sql IMMUTABLE AS $fn$
        SELECT to_tsvector('simple', coalesce(p_title, '') || ' ' || coalesce(p_summary, '') || ' ' || coalesce(array_to_string(p_tags, ' '), ''))
      $fn$;
      ALTER TABLE registry_entries DROP COLUMN search;
      ALTER TABLE registry_entries ADD COLUMN search tsvector GENERATED ALWAYS AS (registry_search_text(title, summary, tags)) STORED;
      CREATE INDEX IF NOT EXISTS registry_search ON registry_entries USING gin (search);
      CREATE INDEX IF NOT EXISTS registry_filtered_page
        ON registry_entries (visibility, status, artifact_type, industry, created_at DESC, id DESC) INCLUDE (search);
      ANALYZE registry_entries;
    `,
  },
];
