import type { Migration } from '@app/event-store';

/**
 * Read models of the webhook streams, written in the same transaction as the events. Endpoint
 * secrets are AES-256-GCM sealed in their own table and never enter an event.
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
];
