import type { Migration } from '@app/event-store';

export const creditMigrations: Migration[] = [
  {
    id: 'notary_004_credits',
    sql: `
      CREATE TABLE IF NOT EXISTS notary_credits (
        org_id    text PRIMARY KEY,
        purchased integer NOT NULL DEFAULT 0
      );
    `,
  },
  {
    // The paywall's counter: certificates issued per organization (imported ones never count),
    // taken atomically by the issuing statement instead of counting rows under a lock.
    id: 'notary_007_issuance_counter',
    sql: `
      ALTER TABLE notary_credits ADD COLUMN IF NOT EXISTS issued integer NOT NULL DEFAULT 0;
      INSERT INTO notary_credits (org_id, purchased, issued)
        SELECT org_id, 0, count(*) FROM certificates WHERE NOT imported GROUP BY org_id
        ON CONFLICT (org_id) DO UPDATE SET issued = EXCLUDED.issued;
      -- One issuance slot for the organization, or SQLSTATE SG402 (notary_paywall), which aborts
      -- the whole statement that asked, the certificate's append included. The row lock
      -- serializes an organization's issuances until that statement commits.
      CREATE OR REPLACE FUNCTION notary_take_issuance(p_org text, p_free integer) RETURNS boolean
      LANGUAGE plpgsql AS $fn$
      BEGIN
        INSERT INTO notary_credits AS c (org_id, purchased, issued) VALUES (p_org, 0, 1)
          ON CONFLICT (org_id) DO UPDATE SET issued = c.issued + 1 WHERE c.issued < p_free + c.purchased;
        IF NOT FOUND THEN
          RAISE EXCEPTION 'notary_paywall' USING ERRCODE = 'SG402';
        END IF;
        RETURN true;
      END
      $fn$;
    `,
  },
  {
    // The slots of a batch of issuances (group commit): one per entry of p_orgs (an organization
    // may repeat), taken in organization order (the one order every caller locks rows in), and
    // reported in the order given; false where the paywall refuses.
    id: 'notary_010_issuance_slots',
    sql: `
      CREATE OR REPLACE FUNCTION notary_take_issuances(p_orgs text[], p_free integer) RETURNS boolean[]
      LANGUAGE plpgsql AS $fn$
      DECLARE
        granted boolean[] := array_fill(false, ARRAY[cardinality(p_orgs)]);
        r record;
      BEGIN
        FOR r IN SELECT u.o, u.k FROM unnest(p_orgs) WITH ORDINALITY AS u(o, k) ORDER BY u.o, u.k LOOP
          INSERT INTO notary_credits AS c (org_id, purchased, issued) VALUES (r.o, 0, 1)
            ON CONFLICT (org_id) DO UPDATE SET issued = c.issued + 1 WHERE c.issued < p_free + c.purchased;
          granted[r.k] := FOUND;
        END LOOP;
        RETURN granted;
      END
      $fn$;
    `,
  },
  {
    // The paywall as the issuance counter's invariant: an append whose certificates projection
    // would take the organization past its free quota plus credits is refused whole (SQLSTATE
    // 23514 on this constraint, notary_paywall). FREE_ISSUANCES (3) is the aggregate's constant.
    id: 'notary_011_issuance_allowance',
    sql: `ALTER TABLE notary_credits ADD CONSTRAINT notary_credits_allowance CHECK (issued <= 3 + purchased);`,
  },
  {
    // Each credits checkout and where it stands (creditCheckoutsProjection): the reconciliation
    // finds the ones a crash or a silent provider left without an outcome.
    id: 'notary_014_credit_checkouts',
    sql: `
      CREATE TABLE IF NOT EXISTS notary_credit_checkouts (
        checkout_id  text PRIMARY KEY,
        org_id       text NOT NULL,
        credits      integer,
        amount_cents integer,
        provider_key text,
        status       text NOT NULL,
        started_at   timestamptz,
        updated_at   timestamptz NOT NULL
      );
      CREATE INDEX IF NOT EXISTS notary_credit_checkouts_unsettled
        ON notary_credit_checkouts (started_at) WHERE status IN ('pending', 'unknown');
    `,
  },
];
