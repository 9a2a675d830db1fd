/**
 * More api processes beside the bench's own (BENCH_API_PROCESSES=n starts n-1 of them): the
 * scale-out DESIGN.md describes, several api processes on one PostgreSQL and Redis. Each is
 * `dist/apps/api/src/main.js` on its own loopback port; the load generator spreads its
 * connections over all of them, as a load balancer would.
 */
import { ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { DEFAULT_DATABASE_URL, DEFAULT_REDIS_URL } from './api';
import { envInt, log } from './harness';

// The key the test suites (and startBenchApi) seal signing keys under (test/support/test-kek.ts).
const TEST_KEY_ENCRYPTION_KEY = createHash('sha256').update('sigil test key-encryption key').digest('base64');

export interface ApiProcesses {
  urls: string[];
  pids: number[];
  close(): Promise<void>;
}

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });

async function ready(url: string, child: ChildProcess, timeoutMs = 60_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (child.exitCode !== null) throw new Error(`api process exited with code ${child.exitCode}`);
    try {
      if ((await fetch(`${url}/healthz`)).ok) return;
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`api process at ${url} not ready after ${timeoutMs} ms`);
}

/** Starts `BENCH_API_PROCESSES - 1` more api processes (none by default) with the bench api's settings. */
export async function startMoreApis(options: { schema?: string; env?: Record<string, string> }): Promise<ApiProcesses> {
  const extra = envInt('BENCH_API_PROCESSES', 1) - 1;
  const base = process.env.DATABASE_URL ?? DEFAULT_DATABASE_URL;
  const databaseUrl = options.schema ? `${base}${base.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${options.schema}`)}` : base;
  const children: ChildProcess[] = [];
  const urls: string[] = [];
  const close = async () => {
    await Promise.all(
      children.map(
        (c) =>
          new Promise<void>((resolve) => {
            if (c.exitCode !== null || c.signalCode !== null) return resolve();
            c.once('exit', () => resolve());
            c.kill('SIGTERM');
          }),
      ),
    );
  };
  try {
    for (let i = 0; i < extra; i++) {
      const port = await freePort();
      const url = `http://127.0.0.1:${port}`;
      const child = spawn(process.execPath, [join(__dirname, '../../apps/api/src/main.js')], {
        env: {
          ...process.env,
          DATABASE_URL: databaseUrl,
          REDIS_URL: process.env.REDIS_URL ?? DEFAULT_REDIS_URL,
          KEY_ENCRYPTION_KEY: process.env.KEY_ENCRYPTION_KEY ?? TEST_KEY_ENCRYPTION_KEY,
          LOG_LEVEL: 'silent',
          WORKERS: 'off',
          PORT: String(port),
          HOST: '127.0.0.1',
          BASE_URL: url,
          ...options.env,
        },
        stdio: ['ignore', 'ignore', 'ignore'],
      });
      children.push(child);
      await ready(url, child);
      urls.push(url);
    }
    if (extra > 0) log(`started ${extra} more api process(es): ${urls.join(', ')}`);
    return { urls, pids: children.map((c) => c.pid!), close };
  } catch (err) {
    await close();
    throw err;
  }
}

/** CPU seconds (user + system) a process has used so far, from /proc (Linux); 0 elsewhere. */
export function processCpuSeconds(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}
