import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventStoreContract } from '../contract/event-store.contract';
import { projectionsContract } from '../contract/projections.contract';
import { allOrderContract } from '../contract/all-order.contract';
import { openEventStore } from '../open-event-store';

// The embedded adapter always runs: PGlite needs nothing outside this process.
const harness = () => {
  let dir: string;
  return {
    async open() {
      dir = mkdtempSync(join(tmpdir(), 'sigil-es-'));
      return openEventStore({ dataDir: dir, pollIntervalMs: 50 });
    },
    async dispose() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
};
eventStoreContract('embedded (PGlite)', harness);
allOrderContract('embedded (PGlite)', harness);
projectionsContract('embedded (PGlite)', harness);
