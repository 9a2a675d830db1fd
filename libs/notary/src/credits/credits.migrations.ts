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
];
