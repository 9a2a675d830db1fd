import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client } from 'pg';
import { openEventStore } from '../open-event-store';
import { SqlDatabase } from '../sql/sql-database';
import { SqlEventStore } from '../sql/sql-event-store';

/**
 * A projection process killed with SIGKILL at random moments, and restarted, applies every
 * event exactly once: its read-model writes and checkpoint commit together or not at all.
 * PostgreSQL only: it needs a second process on the same database.
 */
const url = process.env.DATABASE_URL as string;
if (!url) throw new Error('DATABASE_URL is required');
const root = resolve(__dirname, '../../../..');
const schema = `kill_test_${randomBytes(5).toString('hex')}`;
const EVENTS = 3000;

// The child: a ProjectionRunner over the compiled libs, slow enough per event to be killed mid-batch.
const childScript = (libs: string) => `
  const { openEventStore, ProjectionRunner } = require(${JSON.stringify(join(libs, 'event-store/src'))});
  (async () => {
    const { db, store } = await openEventStore({ databaseUrl: process.env.DATABASE_URL, schema: ${JSON.stringify(schema)} });
    const runner = new ProjectionRunner(db, store, {
      name: 'kill-test',
      async apply(event, tx) {
        await tx.query('INSERT INTO kill_applied (event_id, applied) VALUES ($1, 1) ON CONFLICT (event_id) DO UPDATE SET applied = kill_applied.applied + 1', [event.event_id]);
        if (Math.random() < 0.05) await new Promise((r) => setTimeout(r, 2));
      },
    }, { batchSize: 97 });
    for (;;) {
      const n = await runner.runBatch();
      process.stdout.write('batch ' + n + '\\n');
      if (n === 0) await new Promise((r) => setTimeout(r, 20));
    }
  })();
`;

describe('projection runner under SIGKILL (postgres)', () => {
  let libs: string;
  let db: SqlDatabase;
  let store: SqlEventStore;
  /** Position of the last event this test appended: done means the checkpoint is past it. */
  let lastPosition = 0;

  beforeAll(async () => {
    libs = mkdtempSync(join(tmpdir(), 'sigil-kill-'));
    execFileSync(process.execPath, [require.resolve('@swc/cli/bin/swc.js'), 'libs', '-d', libs, '--config-file', '.swcrc', '--quiet'], { cwd: root });
    ({ db, store } = await openEventStore({ databaseUrl: url, schema }));
    await db.exec('CREATE TABLE kill_applied (event_id uuid PRIMARY KEY, applied int NOT NULL)');
    for (let i = 0; i < EVENTS / 20; i++) {
      lastPosition = (await store.append(`kill-${i % 7}`, Array.from({ length: 20 }, (_, k) => ({ type: 'Item', data: { i, k } })))).position;
    }
  }, 120_000);

  afterAll(async () => {
    await store?.close();
    await db?.close();
    const c = new Client({ connectionString: url });
    await c.connect();
    await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await c.end();
    rmSync(libs, { recursive: true, force: true });
  });

  const applied = async () => (await db.query<{ applied: number }>('SELECT applied FROM kill_applied')).map((r) => Number(r.applied));
  const checkpoint = async () => Number((await db.query<{ position: string }>(`SELECT position FROM projection_checkpoints WHERE name = 'kill-test'`))[0]?.position ?? 0);

  it('applies each event exactly once across repeated SIGKILLs and restarts', async () => {
    // Not headPosition(): other suites' transactions on this server can hold the visibility
    // horizon below our events for a while; the target is our own last event.
    const head = lastPosition + 1;
    let kills = 0;
    for (let life = 0; ; life++) {
      const child = spawn(process.execPath, ['-e', childScript(join(libs, 'libs'))], {
        env: { ...process.env, NODE_PATH: join(root, 'node_modules') },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (d) => (stderr += d));
      const exited = new Promise<NodeJS.Signals | number | null>((r) => child.on('exit', (code, signal) => r(signal ?? code)));
      const done = await checkpoint();
      if (life < 4 && done < head) {
        // Let it commit a batch or two, then kill it at a random moment.
        const before = (await applied()).length;
        const deadline = Date.now() + 20_000;
        while ((await applied()).length <= before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
        await new Promise((r) => setTimeout(r, Math.random() * 40));
        child.kill('SIGKILL');
        expect(await exited).toBe('SIGKILL');
        kills++;
        // Nothing half-written: the read model holds exactly the events up to the checkpoint.
        const counts = await applied();
        expect(counts.every((c) => c === 1)).toBe(true);
        const upTo = Number(
          (await db.query<{ n: string }>('SELECT count(*) AS n FROM events WHERE global_position < $1', [await checkpoint()]))[0].n,
        );
        expect(counts).toHaveLength(upTo);
        continue;
      }
      // Last life: run to the end.
      const deadline = Date.now() + 60_000;
      while ((await checkpoint()) < head && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      child.kill('SIGTERM');
      await exited;
      expect(stderr).toBe('');
      break;
    }
    expect(kills).toBe(4);
    const counts = await applied();
    expect(counts).toHaveLength(EVENTS);
    expect(counts.every((c) => c === 1)).toBe(true);
  }, 180_000);
});
