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
];
