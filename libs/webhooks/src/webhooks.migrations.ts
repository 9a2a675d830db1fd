import type { Migration } from '@app/event-store';

/**
 * Read models of the webhook streams, written by their inline projections with the events.
 * Endpoint secrets are AES-256-GCM sealed in their own table (written by the endpoint
 * repository) and never enter an event; delivery leases (the scheduler without Redis) are the
 * delivery repository's own.
 */
export const webhookMigrations: Migration[] = [
  {
    id: 'webhooks_001_endpoints_and_deliveries',
    sql: `
      CREATE TABLE IF NOT EXISTS webhook_endpoints (
        id              text PRIMARY KEY,
        org_id          text NOT NULL,
        url             text NOT NULL,
        event_types     text[] NOT NULL,
        description     text,
        enabled         boolean NOT NULL,
        disabled_reason text,
        disabled_at     timestamptz,
        failing_since   timestamptz,
        revision        bigint NOT NULL,
        created_at      timestamptz NOT NULL,
        updated_at      timestamptz NOT NULL,
        deleted_at      timestamptz
      );
      CREATE INDEX IF NOT EXISTS webhook_endpoints_org ON webhook_endpoints (org_id, created_at, id) WHERE deleted_at IS NULL;

      CREATE TABLE IF NOT EXISTS webhook_endpoint_secrets (
        endpoint_id text NOT NULL REFERENCES webhook_endpoints (id),
        secret_id   text NOT NULL,
        sealed      text NOT NULL,
        created_at  timestamptz NOT NULL,
        expires_at  timestamptz,
        PRIMARY KEY (endpoint_id, secret_id)
      );

      CREATE TABLE IF NOT EXISTS webhook_deliveries (
        id                text PRIMARY KEY,
        org_id            text NOT NULL,
        endpoint_id       text NOT NULL,
        event_id          uuid NOT NULL,
        event_type        text NOT NULL,
        transaction_id    text,
        body              text NOT NULL,
        status            text NOT NULL,
        series            integer NOT NULL,
        series_attempts   integer NOT NULL,
        attempts          integer NOT NULL,
        next_attempt_at   timestamptz,
        lease_until       timestamptz,
        last_attempt_at   timestamptz,
        last_status_code  integer,
        last_error        text,
        revision          bigint NOT NULL,
        event_recorded_at timestamptz NOT NULL,
        created_at        timestamptz NOT NULL,
        updated_at        timestamptz NOT NULL,
        delivered_at      timestamptz
      );
      CREATE INDEX IF NOT EXISTS webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
      CREATE INDEX IF NOT EXISTS webhook_deliveries_org ON webhook_deliveries (org_id, created_at DESC, id DESC);
      CREATE INDEX IF NOT EXISTS webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, status, created_at);
      CREATE INDEX IF NOT EXISTS webhook_deliveries_event ON webhook_deliveries (event_id);

      CREATE TABLE IF NOT EXISTS webhook_delivery_attempts (
        delivery_id     text NOT NULL,
        attempt         integer NOT NULL,
        series          integer NOT NULL,
        attempted_at    timestamptz NOT NULL,
        status_code     integer,
        latency_ms      integer NOT NULL,
        error           text,
        response_body   text,
        outcome         text NOT NULL,
        next_attempt_at timestamptz,
        PRIMARY KEY (delivery_id, attempt)
      );
    `,
  },
  {
    // The endpoint failure streak and the live-endpoint count as rows the projections write
    // (a CHECK holds the per-organization limit); leases apart from the read model; a secret is
    // stored before the event that names it, so it no longer references the endpoint's row.
    id: 'webhooks_002_projection_tables',
    sql: `
      CREATE TABLE IF NOT EXISTS webhook_endpoint_failing (
        endpoint_id text PRIMARY KEY,
        since       timestamptz NOT NULL
      );
      INSERT INTO webhook_endpoint_failing (endpoint_id, since)
        SELECT id, failing_since FROM webhook_endpoints WHERE failing_since IS NOT NULL ON CONFLICT DO NOTHING;
      ALTER TABLE webhook_endpoints DROP COLUMN IF EXISTS failing_since;

      CREATE TABLE IF NOT EXISTS webhook_endpoint_counts (
        org_id text PRIMARY KEY,
        active integer NOT NULL,
        CONSTRAINT webhook_endpoint_limit CHECK (active <= 100)
      );
      INSERT INTO webhook_endpoint_counts (org_id, active)
        SELECT org_id, count(*) FROM webhook_endpoints WHERE deleted_at IS NULL GROUP BY org_id ON CONFLICT DO NOTHING;

      ALTER TABLE webhook_endpoint_secrets DROP CONSTRAINT IF EXISTS webhook_endpoint_secrets_endpoint_id_fkey;

      CREATE TABLE IF NOT EXISTS webhook_delivery_leases (
        delivery_id text PRIMARY KEY,
        revision    bigint NOT NULL,
        lease_until timestamptz NOT NULL
      );
      INSERT INTO webhook_delivery_leases (delivery_id, revision, lease_until)
        SELECT id, revision, lease_until FROM webhook_deliveries WHERE lease_until IS NOT NULL ON CONFLICT DO NOTHING;
      ALTER TABLE webhook_deliveries DROP COLUMN IF EXISTS lease_until;
    `,
  },
];
