import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventStoreContract } from '../contract/event-store.contract';
import { openEventStore } from '../open-event-store';

// The embedded adapter always runs: PGlite needs nothing outside this process.
let dir: string;
eventStoreContract('embedded (PGlite)', () => ({
  async open() {
    dir = mkdtempSync(join(tmpdir(), 'sigil-es-'));
    return openEventStore({ dataDir: dir, pollIntervalMs: 50 });
  },
  async dispose() {
    rmSync(dir, { recursive: true, force: true });
  },
}));
