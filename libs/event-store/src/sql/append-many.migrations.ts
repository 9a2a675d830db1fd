import type { Migration } from './migrations';

/** sigil_append_many: several streams in one statement (group commit). Applied migrations are history: never edited. */
export const appendManyMigrations: Migration[] = [
  {
    id: 'event_store_004_append_many',
    // Many appends (each to a different stream) in one call, with the semantics of calling
    // sigil_append for each in turn, but set-based: create and lock every head at once (in
    // stream order, the one order all callers share), look the ids up at once, insert every event
    // with one INSERT and move every head with one UPDATE. A handful of statements per call
    // instead of eight per append: what a batch of single-event appends (webhook deliveries)
    // needs. Rows come back in the order given, `ord` 1-based.
    sql: `
      CREATE OR REPLACE FUNCTION sigil_append_many(
        p_streams text[], p_expected text[], p_lo int[], p_hi int[],
        p_ids uuid[], p_types text[], p_data text[], p_metadata text[],
        p_recorded_at timestamptz, p_heads text[], p_mids text[], p_tails text[]
      ) RETURNS TABLE (ord int, status text, stream_revision bigint, first_position bigint, hashes text[], previous_hash text)
      LANGUAGE plpgsql SET plan_cache_mode = force_custom_plan AS $fn$
      DECLARE
        m int := cardinality(p_streams);
        found_head boolean[];
        revs bigint[];
        lasts text[];
        known uuid[];
        base bigint;
        pos bigint;
        cur bigint;
        prev text;
        h text;
        chain text[];
        e_pos bigint[] := '{}';
        e_stream text[] := '{}';
        e_rev bigint[] := '{}';
        e_hash text[] := '{}';
        e_prev text[] := '{}';
        e_idx int[] := '{}';
        u_stream text[] := '{}';
        u_rev bigint[] := '{}';
        u_hash text[] := '{}';
      BEGIN
        IF m = 0 THEN RETURN; END IF;
        IF (SELECT count(DISTINCT x) FROM unnest(p_streams) x) <> m THEN
          RAISE EXCEPTION 'sigil_append_many: each stream at most once per call' USING ERRCODE = '22023';
        END IF;
        INSERT INTO streams (stream_id, revision, last_hash)
          SELECT x.s, -1, NULL FROM unnest(p_streams, p_expected) AS x(s, e) WHERE x.e IN ('any', 'no_stream') ORDER BY x.s
          ON CONFLICT (stream_id) DO NOTHING;
        SELECT array_agg(l.stream_id IS NOT NULL ORDER BY u.k), array_agg(l.revision ORDER BY u.k), array_agg(l.last_hash ORDER BY u.k)
          INTO found_head, revs, lasts
          FROM unnest(p_streams) WITH ORDINALITY AS u(s, k)
          LEFT JOIN (SELECT st.stream_id, st.revision, st.last_hash FROM streams st WHERE st.stream_id = ANY(p_streams) ORDER BY st.stream_id FOR UPDATE) l
            ON l.stream_id = u.s;
        -- A new statement, a new snapshot: this sees what committed while we waited for the locks.
        SELECT coalesce(array_agg(e.event_id), '{}') INTO known FROM events e WHERE e.event_id = ANY(p_ids);
        base := pg_current_xact_id()::text::bigint << 16;
        SELECT coalesce(max(e.global_position) + 1, base) INTO pos
          FROM events e WHERE e.global_position >= base AND e.global_position < base + 65536;
        IF pos - base + cardinality(p_ids) > 65536 THEN
          RAISE EXCEPTION 'one transaction may append at most 65536 events' USING ERRCODE = '54000';
        END IF;
        FOR k IN 1..m LOOP
          ord := k;
          hashes := NULL;
          previous_hash := NULL;
          first_position := NULL;
          IF NOT found_head[k] THEN
            status := CASE WHEN known && p_ids[p_lo[k]:p_hi[k]] THEN 'replay' ELSE 'wrong_expected_version' END;
            stream_revision := -1;
            RETURN NEXT;
            CONTINUE;
          END IF;
          cur := revs[k];
          stream_revision := cur;
          IF known && p_ids[p_lo[k]:p_hi[k]] THEN
            status := 'replay';
            RETURN NEXT;
            CONTINUE;
          END IF;
          IF NOT (p_expected[k] = 'any'
                  OR (p_expected[k] = 'no_stream' AND cur = -1)
                  OR (p_expected[k] = 'stream_exists' AND cur >= 0)
                  OR (p_expected[k] ~ '^[0-9]+$' AND cur = p_expected[k]::bigint)) THEN
            status := 'wrong_expected_version';
            RETURN NEXT;
            CONTINUE;
          END IF;
          prev := lasts[k];
          chain := '{}';
          FOR i IN p_lo[k]..p_hi[k] LOOP
            h := 'sha256:' || encode(sha256(convert_to(
                   p_heads[i] || coalesce('"' || prev || '"', 'null') || p_mids[i] || (cur + i - p_lo[k] + 1)::text || p_tails[i], 'UTF8')), 'hex');
            e_idx := e_idx || i;
            e_pos := e_pos || (pos + i - p_lo[k]);
            e_stream := e_stream || p_streams[k];
            e_rev := e_rev || (cur + i - p_lo[k] + 1);
            e_hash := e_hash || h;
            e_prev := e_prev || prev;
            chain := chain || h;
            prev := h;
          END LOOP;
          status := 'appended';
          stream_revision := cur + p_hi[k] - p_lo[k] + 1;
          first_position := pos;
          hashes := chain;
          previous_hash := lasts[k];
          u_stream := u_stream || p_streams[k];
          u_rev := u_rev || stream_revision;
          u_hash := u_hash || prev;
          pos := pos + p_hi[k] - p_lo[k] + 1;
          RETURN NEXT;
        END LOOP;
        IF cardinality(e_idx) > 0 THEN
          INSERT INTO events (global_position, event_id, stream_id, revision, type, data, metadata, recorded_at, hash, prev_hash)
          SELECT x.pos, p_ids[x.i], x.stream, x.rev, p_types[x.i], p_data[x.i]::json, p_metadata[x.i]::json, p_recorded_at, x.hash, x.prev
          FROM unnest(e_idx, e_pos, e_stream, e_rev, e_hash, e_prev) AS x(i, pos, stream, rev, hash, prev);
          UPDATE streams st SET revision = x.rev, last_hash = x.hash
          FROM unnest(u_stream, u_rev, u_hash) AS x(stream, rev, hash) WHERE st.stream_id = x.stream;
        END IF;
      END
      $fn$
    `,
  },
  {
    id: 'event_store_005_append_many_data_once',
    // sigil_append_many again, sending each event's data once: the hashed form's head
    // ({"data":…,"event_id":…,"metadata":…,"prev_hash":) is assembled here from the data, id and
    // metadata already sent (the id's JSON form is the uuid in quotes: no escaping), and the
    // fragment after recorded_at is one value for the whole call. Replaces 004's function.
    sql: `
      DROP FUNCTION IF EXISTS sigil_append_many(text[], text[], int[], int[], uuid[], text[], text[], text[], timestamptz, text[], text[], text[]);
      CREATE OR REPLACE FUNCTION sigil_append_many(
        p_streams text[], p_expected text[], p_lo int[], p_hi int[],
        p_ids uuid[], p_types text[], p_data text[], p_metadata text[],
        p_recorded_at timestamptz, p_mid text, p_tails text[]
      ) RETURNS TABLE (ord int, status text, stream_revision bigint, first_position bigint, hashes text[], previous_hash text)
      LANGUAGE plpgsql SET plan_cache_mode = force_custom_plan AS $fn$
      DECLARE
        m int := cardinality(p_streams);
        found_head boolean[];
        revs bigint[];
        lasts text[];
        known uuid[];
        base bigint;
        pos bigint;
        cur bigint;
        prev text;
        h text;
        chain text[];
        e_pos bigint[] := '{}';
        e_stream text[] := '{}';
        e_rev bigint[] := '{}';
        e_hash text[] := '{}';
        e_prev text[] := '{}';
        e_idx int[] := '{}';
        u_stream text[] := '{}';
        u_rev bigint[] := '{}';
        u_hash text[] := '{}';
      BEGIN
        IF m = 0 THEN RETURN; END IF;
        IF (SELECT count(DISTINCT x) FROM unnest(p_streams) x) <> m THEN
          RAISE EXCEPTION 'sigil_append_many: each stream at most once per call' USING ERRCODE = '22023';
        END IF;
        INSERT INTO streams (stream_id, revision, last_hash)
          SELECT x.s, -1, NULL FROM unnest(p_streams, p_expected) AS x(s, e) WHERE x.e IN ('any', 'no_stream') ORDER BY x.s
          ON CONFLICT (stream_id) DO NOTHING;
        SELECT array_agg(l.stream_id IS NOT NULL ORDER BY u.k), array_agg(l.revision ORDER BY u.k), array_agg(l.last_hash ORDER BY u.k)
          INTO found_head, revs, lasts
          FROM unnest(p_streams) WITH ORDINALITY AS u(s, k)
          LEFT JOIN (SELECT st.stream_id, st.revision, st.last_hash FROM streams st WHERE st.stream_id = ANY(p_streams) ORDER BY st.stream_id FOR UPDATE) l
            ON l.stream_id = u.s;
        -- A new statement, a new snapshot: this sees what committed while we waited for the locks.
        SELECT coalesce(array_agg(e.event_id), '{}') INTO known FROM events e WHERE e.event_id = ANY(p_ids);
        base := pg_current_xact_id()::text::bigint << 16;
        SELECT coalesce(max(e.global_position) + 1, base) INTO pos
          FROM events e WHERE e.global_position >= base AND e.global_position < base + 65536;
        IF pos - base + cardinality(p_ids) > 65536 THEN
          RAISE EXCEPTION 'one transaction may append at most 65536 events' USING ERRCODE = '54000';
        END IF;
        FOR k IN 1..m LOOP
          ord := k;
          hashes := NULL;
          previous_hash := NULL;
          first_position := NULL;
          IF NOT found_head[k] THEN
            status := CASE WHEN known && p_ids[p_lo[k]:p_hi[k]] THEN 'replay' ELSE 'wrong_expected_version' END;
            stream_revision := -1;
            RETURN NEXT;
            CONTINUE;
          END IF;
          cur := revs[k];
          stream_revision := cur;
          IF known && p_ids[p_lo[k]:p_hi[k]] THEN
            status := 'replay';
            RETURN NEXT;
            CONTINUE;
          END IF;
          IF NOT (p_expected[k] = 'any'
                  OR (p_expected[k] = 'no_stream' AND cur = -1)
                  OR (p_expected[k] = 'stream_exists' AND cur >= 0)
                  OR (p_expected[k] ~ '^[0-9]+$' AND cur = p_expected[k]::bigint)) THEN
            status := 'wrong_expected_version';
            RETURN NEXT;
            CONTINUE;
          END IF;
          prev := lasts[k];
          chain := '{}';
          FOR i IN p_lo[k]..p_hi[k] LOOP
            h := 'sha256:' || encode(sha256(convert_to(
                   '{"data":' || p_data[i] || ',"event_id":"' || p_ids[i]::text || '","metadata":' || p_metadata[i] || ',"prev_hash":'
                   || coalesce('"' || prev || '"', 'null') || p_mid || (cur + i - p_lo[k] + 1)::text || p_tails[i], 'UTF8')), 'hex');
            e_idx := e_idx || i;
            e_pos := e_pos || (pos + i - p_lo[k]);
            e_stream := e_stream || p_streams[k];
            e_rev := e_rev || (cur + i - p_lo[k] + 1);
            e_hash := e_hash || h;
            e_prev := e_prev || prev;
            chain := chain || h;
            prev := h;
          END LOOP;
          status := 'appended';
          stream_revision := cur + p_hi[k] - p_lo[k] + 1;
          first_position := pos;
          hashes := chain;
          previous_hash := lasts[k];
          u_stream := u_stream || p_streams[k];
          u_rev := u_rev || stream_revision;
          u_hash := u_hash || prev;
          pos := pos + p_hi[k] - p_lo[k] + 1;
          RETURN NEXT;
        END LOOP;
        IF cardinality(e_idx) > 0 THEN
          INSERT INTO events (global_position, event_id, stream_id, revision, type, data, metadata, recorded_at, hash, prev_hash)
          SELECT x.pos, p_ids[x.i], x.stream, x.rev, p_types[x.i], p_data[x.i]::json, p_metadata[x.i]::json, p_recorded_at, x.hash, x.prev
          FROM unnest(e_idx, e_pos, e_stream, e_rev, e_hash, e_prev) AS x(i, pos, stream, rev, hash, prev);
          UPDATE streams st SET revision = x.rev, last_hash = x.hash
          FROM unnest(u_stream, u_rev, u_hash) AS x(stream, rev, hash) WHERE st.stream_id = x.stream;
        END IF;
      END
      $fn$
    `,
  },
  {
    id: 'event_store_006_append_many_generic_plans',
    // Plan sigil_append_many's statements once per connection instead of on every call (custom
    // plans cost ~0.5 ms a call, most of a small batch's time), and rule out the trap 003 guards
    // sigil_append against (a plan cached while a table was small scanning it whole forever):
    // with sequential scans off every statement's plan uses its index, whatever the size.
    sql: `
      ALTER FUNCTION sigil_append_many(text[], text[], int[], int[], uuid[], text[], text[], text[], timestamptz, text, text[])
        SET plan_cache_mode = force_generic_plan;
      ALTER FUNCTION sigil_append_many(text[], text[], int[], int[], uuid[], text[], text[], text[], timestamptz, text, text[])
        SET enable_seqscan = off;
    `,
  },
];
