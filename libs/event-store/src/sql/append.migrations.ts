import type { Migration } from './migrations';

/** The events and streams tables, the checkpoints, and sigil_append (one round trip per append). */
export const appendMigrations: Migration[] = [
  {
    id: 'event_store_001_events',
    sql: `
      CREATE TABLE IF NOT EXISTS streams (
        stream_id  text PRIMARY KEY,
        revision   bigint NOT NULL,
        last_hash  text
      );
      -- global_position = (xid << 16) + n: increasing in commit-visibility order (see sql-event-store.ts).
      CREATE TABLE IF NOT EXISTS events (
        global_position bigint PRIMARY KEY,
        event_id    uuid NOT NULL,
        stream_id   text NOT NULL,
        revision    bigint NOT NULL,
        type        text NOT NULL,
        data        json NOT NULL,
        metadata    json NOT NULL,
        recorded_at timestamptz NOT NULL,
        hash        text NOT NULL,
        prev_hash   text,
        CONSTRAINT events_event_id_key UNIQUE (event_id),
        CONSTRAINT events_stream_revision_key UNIQUE (stream_id, revision)
      );
      CREATE INDEX IF NOT EXISTS events_type_position ON events (type, global_position);
      CREATE TABLE IF NOT EXISTS projection_checkpoints (
        name       text PRIMARY KEY,
        position   bigint NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now()
      );
    `,
  },
  {
    id: 'event_store_002_append_function',
    // One round trip per append: lock (or create) the stream head, detect replays, check the
    // expected revision, chain the hashes, assign positions, insert, move the head. The caller
    // sends each event's RFC 8785 form in three fragments around prev_hash and revision, so the
    // hash here covers exactly the bytes that eventHash() in hash-chain.ts canonicalizes.
    sql: `
      CREATE OR REPLACE FUNCTION sigil_append(
        p_stream text, p_expected text, p_ids uuid[], p_types text[], p_data text[], p_metadata text[],
        p_recorded_at timestamptz, p_heads text[], p_mids text[], p_tails text[]
      ) RETURNS TABLE (status text, stream_revision bigint, first_position bigint, hashes text[], previous_hash text)
      LANGUAGE plpgsql AS $fn$
      DECLARE
        cur bigint;
        last text;
        n int := cardinality(p_ids);
        base bigint;
        first bigint;
        prev text;
        h text;
        chain text[] := '{}';
        prevs text[] := '{}';
      BEGIN
        SELECT s.revision, s.last_hash INTO cur, last FROM streams s WHERE s.stream_id = p_stream FOR UPDATE;
        IF NOT FOUND THEN
          IF p_expected NOT IN ('any', 'no_stream') THEN
            IF EXISTS (SELECT 1 FROM events e WHERE e.event_id = ANY(p_ids)) THEN
              RETURN QUERY SELECT 'replay'::text, -1::bigint, NULL::bigint, NULL::text[], NULL::text;
            ELSE
              RETURN QUERY SELECT 'wrong_expected_version'::text, -1::bigint, NULL::bigint, NULL::text[], NULL::text;
            END IF;
            RETURN;
          END IF;
          INSERT INTO streams (stream_id, revision, last_hash) VALUES (p_stream, -1, NULL) ON CONFLICT (stream_id) DO NOTHING;
          SELECT s.revision, s.last_hash INTO cur, last FROM streams s WHERE s.stream_id = p_stream FOR UPDATE;
        END IF;
        -- A new statement, a new snapshot: this sees what committed while we waited for the lock.
        IF EXISTS (SELECT 1 FROM events e WHERE e.event_id = ANY(p_ids)) THEN
          RETURN QUERY SELECT 'replay'::text, cur, NULL::bigint, NULL::text[], NULL::text;
          RETURN;
        END IF;
        IF NOT (p_expected = 'any'
                OR (p_expected = 'no_stream' AND cur = -1)
                OR (p_expected = 'stream_exists' AND cur >= 0)
                OR (p_expected ~ '^[0-9]+$' AND cur = p_expected::bigint)) THEN
          RETURN QUERY SELECT 'wrong_expected_version'::text, cur, NULL::bigint, NULL::text[], NULL::text;
          RETURN;
        END IF;
        base := pg_current_xact_id()::text::bigint << 16;
        SELECT coalesce(max(e.global_position) + 1, base) INTO first
          FROM events e WHERE e.global_position >= base AND e.global_position < base + 65536;
        IF first - base + n > 65536 THEN
          RAISE EXCEPTION 'one transaction may append at most 65536 events' USING ERRCODE = '54000';
        END IF;
        prev := last;
        FOR i IN 1..n LOOP
          h := 'sha256:' || encode(sha256(convert_to(
                 p_heads[i] || coalesce('"' || prev || '"', 'null') || p_mids[i] || (cur + i)::text || p_tails[i], 'UTF8')), 'hex');
          prevs := prevs || prev;
          chain := chain || h;
          prev := h;
        END LOOP;
        INSERT INTO events (global_position, event_id, stream_id, revision, type, data, metadata, recorded_at, hash, prev_hash)
        SELECT first + u.ord - 1, u.id, p_stream, cur + u.ord, u.type, u.data::json, u.metadata::json, p_recorded_at, u.hash, u.prev
        FROM unnest(p_ids, p_types, p_data, p_metadata, chain, prevs) WITH ORDINALITY AS u(id, type, data, metadata, hash, prev, ord);
        UPDATE streams SET revision = cur + n, last_hash = prev WHERE stream_id = p_stream;
        RETURN QUERY SELECT 'appended'::text, cur + n, first, chain, last;
      END
      $fn$
    `,
  },
  {
    id: 'event_store_003_append_custom_plans',
    // A plan cached while the table was small (a sequential scan for the replay check) would be
    // reused forever on that connection; plan each call for the arrays it actually gets.
    sql: `
      ALTER FUNCTION sigil_append(text, text, uuid[], text[], text[], text[], timestamptz, text[], text[], text[])
        SET plan_cache_mode = force_custom_plan;
    `,
  },
];
