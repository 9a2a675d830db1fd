import { ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { TEST_KEY_ENCRYPTION_KEY } from '../support/test-kek';

/**
 * Runs the service the way `npm start` and `npm run start:worker` do (scripts/start.js builds
 * if needed, then runs the role), as a child process, and talks to it over HTTP.
 */
const root = resolve(__dirname, '../..');

interface Run {
  child: ChildProcess;
  stdout: string[];
  stderr: string[];
  exited: Promise<number | null>;
}

function run(role: 'api' | 'worker', env: Record<string, string | undefined>): Run {
  const child = spawn(process.execPath, [join(root, 'scripts/start.js'), role], {
    cwd: root,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stdout: string[] = [];
  const stderr: string[] = [];
  child.stdout!.on('data', (d) => stdout.push(String(d)));
  child.stderr!.on('data', (d) => stderr.push(String(d)));
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  return { child, stdout, stderr, exited };
}

const freePort = () =>
  new Promise<number>((res) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => res(port));
    });
  });

async function waitForHealthy(url: string, r: Run, timeoutMs: number): Promise<number> {
  const started = Date.now();
  while (Date.now() - started < timeoutMs) {
    if (r.child.exitCode !== null) throw new Error(`exited ${r.child.exitCode}: ${r.stderr.join('')}`);
    try {
      const res = await fetch(`${url}/healthz`);
      if (res.status === 200) return Date.now() - started;
    } catch {
      /* not listening yet */
    }
    await new Promise((res) => setTimeout(res, 100));
  }
  throw new Error(`not healthy within ${timeoutMs} ms: ${r.stderr.join('')}`);
}

// In the PostgreSQL pass, processes share the database and need the key-encryption key.
const modeEnv = () => ({
  DATABASE_URL: process.env.DATABASE_URL,
  REDIS_URL: process.env.REDIS_URL,
  KEY_ENCRYPTION_KEY: process.env.DATABASE_URL ? TEST_KEY_ENCRYPTION_KEY : undefined,
});

describe('npm start (api process)', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'sigil-sys-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('serves /healthz within 30 s on a fresh data dir, logs JSON, and exits 0 on SIGTERM', async () => {
    const port = await freePort();
    const r = run('api', { ...modeEnv(), PORT: String(port), DATA_DIR: dataDir });
    const tookMs = await waitForHealthy(`http://127.0.0.1:${port}`, r, 30_000);
    expect(tookMs).toBeLessThan(30_000);
    expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);
    expect(r.stderr.join('')).toContain(`Sigil is running at http://localhost:${port}`);
    expect(r.stderr.join('')).toContain(`Sandbox key: curl -X POST http://localhost:${port}/api/sandbox/keys`);
    // Embedded first start: a demo organization and a test key with every scope, shown once.
    if (!process.env.DATABASE_URL) expect(r.stderr.join('')).toMatch(/First start: created the demo organization org_[0-9a-f]{24}[\s\S]*cdp_test_[0-9a-f]{64}/);
    // ...and beside it, the demo owner's one-time console link, which signs in once.
    if (!process.env.DATABASE_URL) {
      const linkRe = new RegExp(`Console: http://localhost:${port}/console .*owner@demo\\.sigil\\.invalid[\\s\\S]*?http://localhost:${port}(/console/sign-in/link\\?token=sgl_[0-9a-f]{64})`);
      for (let i = 0; i < 50 && !linkRe.test(r.stderr.join('')); i++) await new Promise((res) => setTimeout(res, 100));
      const path = linkRe.exec(r.stderr.join(''))![1];
      const csrf = '0123456789abcdef0123456789abcdef';
      const form = { method: 'POST', redirect: 'manual' as const, headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: `sigil_signin=${csrf}` }, body: new URLSearchParams({ csrf, token: path.split('token=')[1] }).toString() };
      const signedIn = await fetch(`http://127.0.0.1:${port}/console/sign-in/link`, form);
      expect(signedIn.status).toBe(303);
      expect(signedIn.headers.get('set-cookie')).toMatch(/^sigil_session=sgs_[0-9a-f]{64};/);
      expect((await fetch(`http://127.0.0.1:${port}/console/sign-in/link`, form)).status).toBe(401);
    }

    r.child.kill('SIGTERM');
    expect(await r.exited).toBe(0);
    const lines = r.stdout.join('').split('\n').filter(Boolean);
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
    expect(lines.map((l) => JSON.parse(l).msg)).toEqual(expect.arrayContaining(['sigil api listening', 'stopped']));
  }, 60_000);

  // Embedded mode only: with PostgreSQL the key comes from the environment, never a file.
  const embeddedOnly = process.env.DATABASE_URL ? () => undefined : it;
  embeddedOnly('starts again on the same data dir, keeping its key-encryption key', async () => {
    const kekFile = join(dataDir, 'key-encryption-key');
    const kek = readFileSync(kekFile, 'utf8');
    expect(statSync(kekFile).mode & 0o777).toBe(0o600);
    const port = await freePort();
    const r = run('api', { PORT: String(port), DATA_DIR: dataDir });
    await waitForHealthy(`http://127.0.0.1:${port}`, r, 30_000);
    r.child.kill('SIGTERM');
    expect(await r.exited).toBe(0);
    expect(readFileSync(kekFile, 'utf8')).toBe(kek);
    expect(r.stderr.join('')).not.toContain('First start');
  }, 60_000);

  it.each([
    ['PORT', 'not-a-port'],
    ['LOG_LEVEL', 'loud'],
    ['DATABASE_URL', 'mysql://localhost/x'],
    ['KEY_ENCRYPTION_KEY', 'c2hvcnQ='],
    ['WORKERS', 'sometimes'],
  ])('refuses to start when %s is invalid, naming it', async (variable, value) => {
    const r = run('api', { DATA_DIR: dataDir, [variable]: value });
    expect(await r.exited).toBe(1);
    expect(r.stderr.join('')).toMatch(new RegExp(`Invalid configuration: .*${variable}`));
  }, 30_000);
});

describe('npm run start:worker', () => {
  it('refuses to start without DATABASE_URL and REDIS_URL, naming both', async () => {
    const r = run('worker', {});
    expect(await r.exited).toBe(1);
    expect(r.stderr.join('')).toMatch(/DATABASE_URL.*is required by start:worker.*REDIS_URL/);
  }, 30_000);

  if (process.env.DATABASE_URL && process.env.REDIS_URL) {
    it('runs beside the database and Redis, and exits 0 on SIGTERM', async () => {
      const r = run('worker', modeEnv());
      const deadline = Date.now() + 30_000;
      while (!r.stdout.join('').includes('sigil worker running') && Date.now() < deadline) {
        if (r.child.exitCode !== null) throw new Error(r.stderr.join(''));
        await new Promise((res) => setTimeout(res, 100));
      }
      expect(r.stdout.join('')).toContain('sigil worker running');
      r.child.kill('SIGTERM');
      expect(await r.exited).toBe(0);
    }, 60_000);
  }
});
