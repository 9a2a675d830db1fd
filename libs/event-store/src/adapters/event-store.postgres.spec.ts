import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { eventStoreContract } from '../contract/event-store.contract';
import { projectionsContract } from '../contract/projections.contract';
import { allOrderContract } from '../contract/all-order.contract';
import { openEventStore } from '../open-event-store';

/**
 * The postgres adapter runs the same contract when DATABASE_URL is set (`.ci/run` sets it for
 * its second `npm test`). Each run gets its own schema, dropped afterwards.
 */
const url = process.env.DATABASE_URL as string;
if (!url) throw new Error('DATABASE_URL is required for the postgres contract suite');
const harness = () => {
  const schema = `es_test_${randomBytes(6).toString('hex')}`;
  return {
    open: () => openEventStore({ databaseUrl: url, schema, pollIntervalMs: 50 }),
    async dispose() {
      const client = new Client({ connectionString: url });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await client.end();
    },
  };
};

eventStoreContract('postgres', harness);
allOrderContract('postgres', harness);
projectionsContract('postgres', harness);
