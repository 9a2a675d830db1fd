import type { Migration } from '@app/event-store';

/**
 * The policy versions read model, written in the same database transaction as the
 * `policy.version_recorded` event it comes from. The primary key serves "current version"
 * (the highest version of an organization's policy) with one index probe.
 */
export const policyMigrations: Migration[] = [
  {
    id: 'commerce_001_policies',
    sql: `
      CREATE TABLE IF NOT EXISTS commerce_policies (
        organization_id text NOT NULL,
        policy_id       text NOT NULL,
        version         integer NOT NULL,
        policy          json NOT NULL,
        policy_hash     text NOT NULL,
        created_at      timestamptz NOT NULL,
        PRIMARY KEY (organization_id, policy_id, version)
      );
    `,
  },
];
