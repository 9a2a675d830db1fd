import type { Migration } from './migrations';

/** What row guards (InlineProjection.guards) call in the append's statement. Applied migrations are history: never edited. */
export const rowGuardMigrations: Migration[] = [
  {
    id: 'event_store_008_row_guards',
    // Refuses the statement that asked, as a CHECK constraint would (SQLSTATE 23514 naming the
    // guard), so the store reports it as ReadModelConstraintViolated; true otherwise.
    sql: `
      CREATE OR REPLACE FUNCTION sigil_refuse_if(p_refused boolean, p_guard text) RETURNS boolean
      LANGUAGE plpgsql AS $fn$
      BEGIN
        IF p_refused THEN
          RAISE EXCEPTION 'read-model guard % refused the change', p_guard USING ERRCODE = 'check_violation', CONSTRAINT = p_guard;
        END IF;
        RETURN true;
      END
      $fn$;
    `,
  },
  {
    id: 'event_store_009_queued_row_guards',
    // A row guard with a queue (RowGuard.queue) takes this shared lock on each key before it shares
    // the row. PostgreSQL lets a new sharer of a row overtake a writer waiting for it, but not a
    // new holder of an advisory lock overtake a waiting exclusive holder: a writer that takes the
    // key's advisory lock exclusively first (pg_advisory_xact_lock(queue, hashtext(key))) is
    // therefore never kept waiting by sharers that came after it.
    sql: `
      CREATE OR REPLACE FUNCTION sigil_queue_behind_writers(p_queue integer, p_key text) RETURNS boolean
      LANGUAGE plpgsql AS $fn$
      BEGIN
        PERFORM pg_advisory_xact_lock_shared(p_queue, hashtext(p_key));
        RETURN true;
      END
      $fn$;
    `,
  },
];
