import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { AccessReadModel, AccessService, accessMigrations, hashApiKey, parseApiKey, SCOPES } from '@app/access';
import { openEventStore } from '@app/event-store';
import { TEST_KEY_ENCRYPTION_KEY } from '../support/test-kek';

/**
 * Runs the admin CLI the way `npm run cli -- <command>` does (scripts/start.js builds if needed,
 * then runs the `cli` role) as a child process, on a fresh embedded DATA_DIR, or on PostgreSQL
 * when DATABASE_URL is set (the child inherits it; the CLI needs no KEY_ENCRYPTION_KEY). The
 * PostgreSQL database is shared with other suites, so the tests work only with their own org.
 */
const root = resolve(__dirname, '../..');
const databaseUrl = process.env.DATABASE_URL;

interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** The last stdout line, parsed: the command's one JSON result. */
  json: Record<string, unknown> & { ok?: false; error?: string; message?: string };
}

/** Extra variables for the next runs (the signing-key commands need the key-encryption key). */
let extraEnv: Record<string, string | undefined> = {};

function cli(dataDir: string, ...args: string[]): Promise<CliRun> {
  const child = spawn(process.execPath, [join(root, 'scripts/start.js'), 'cli', ...args], {
    cwd: root,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, DATA_DIR: dataDir, DATABASE_URL: databaseUrl, ...extraEnv },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += String(d)));
  child.stderr.on('data', (d) => (stderr += String(d)));
  return new Promise((res, rej) => {
    child.on('error', rej);
    child.on('close', (code) => {
      const lines = stdout.split('\n').filter(Boolean);
      let json = {} as CliRun['json'];
      try {
        if (lines.length) json = JSON.parse(lines[lines.length - 1]);
      } catch {
        /* asserted below through `stdout` */
      }
      res({ code, stdout, stderr, json });
    });
  });
}

/** Exactly one line on stdout, and it is the JSON object; no stack trace anywhere. */
function expectOneJsonLine(r: CliRun): void {
  expect(r.stdout.trim().split('\n')).toHaveLength(1);
  expect(r.json).toEqual(expect.any(Object));
  expect(r.stderr).not.toMatch(/\n\s+at .+:\d+:\d+/);
}

describe(`npm run cli (${databaseUrl ? 'PostgreSQL' : 'embedded'})`, () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'sigil-cli-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  let orgId: string;
  let testKey: { key_id: string; key: string };
  let liveKey: { key_id: string; key: string };

  // First, so that a needed build happens once, before the store is touched.
  it('help (and no command) prints the usage on stderr, nothing on stdout, and exits 2', async () => {
    for (const r of [await cli(dataDir, 'help'), await cli(dataDir)]) {
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toContain('usage: npm run cli -- <command>');
      for (const c of ['orgs:create', 'keys:create', 'keys:list', 'keys:revoke']) expect(r.stderr).toContain(c);
    }
  }, 60_000);

  it('orgs:create prints the new organization', async () => {
    const r = await cli(dataDir, 'orgs:create', 'CLI Test Org');
    expect(r.code).toBe(0);
    expectOneJsonLine(r);
    expect(r.json).toEqual({ org_id: expect.stringMatching(/^org_/), name: 'CLI Test Org', kind: 'standard', created_at: expect.any(String) });
    expect(Number.isNaN(Date.parse(r.json.created_at as string))).toBe(false);
    orgId = r.json.org_id as string;
    // With DATABASE_URL it works on PostgreSQL (without KEY_ENCRYPTION_KEY) and leaves DATA_DIR alone.
    expect(existsSync(join(dataDir, 'pglite'))).toBe(!databaseUrl);
  }, 30_000);

  it('keys:create prints the key once, with its id, org, scopes and mode', async () => {
    const a = await cli(dataDir, 'keys:create', '--org', orgId, '--scopes', 'payments:write,certificates:write', '--mode', 'test', '--name', 'ci');
    expect(a.code).toBe(0);
    expectOneJsonLine(a);
    expect(a.json).toMatchObject({ org_id: orgId, scopes: ['payments:write', 'certificates:write'], mode: 'test', name: 'ci' });
    expect(a.json.key).toMatch(/^cdp_test_[0-9a-f]{64}$/);
    expect(a.json.key_id).toBe(parseApiKey(a.json.key as string)!.keyId);
    expect(a.stderr).toMatch(/shown only once/);
    testKey = a.json as typeof testKey;

    const b = await cli(dataDir, 'keys:create', '--org', orgId, '--scopes', 'approvals:manage', '--mode', 'live');
    expect(b.code).toBe(0);
    expect(b.json).toMatchObject({ org_id: orgId, scopes: ['approvals:manage'], mode: 'live', name: null });
    expect(b.json.key).toMatch(/^cdp_live_[0-9a-f]{64}$/);
    liveKey = b.json as typeof liveKey;
  }, 30_000);

  it('keys:revoke prints the revoked key', async () => {
    const r = await cli(dataDir, 'keys:revoke', liveKey.key_id);
    expect(r.code).toBe(0);
    expectOneJsonLine(r);
    expect(r.json).toMatchObject({ key_id: liveKey.key_id, org_id: orgId, status: 'revoked', revoked_at: expect.any(String) });
    expect(r.stdout).not.toContain(liveKey.key);
  }, 30_000);

  it('users:invite makes the first owner and prints their one-time console link; the address again is email_taken', async () => {
    const email = `owner-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}@example.com`;
    const r = await cli(dataDir, 'users:invite', '--org', orgId, '--email', email, '--name', 'First Owner');
    expect(r.code).toBe(0);
    expectOneJsonLine(r);
    expect(r.json).toMatchObject({ link_id: expect.stringMatching(/^lnk_/), url: expect.stringMatching(/^http:\/\/localhost:3000\/console\/sign-in\/link\?token=sgl_[0-9a-f]{64}$/), user: { org_id: orgId, email, display_name: 'First Owner', role: 'owner', invited_by: 'operator' } });
    expect(r.stderr).toMatch(/signs them in to the console once/);
    const again = await cli(dataDir, 'users:invite', '--org', orgId, '--email', email.toUpperCase(), '--name', 'Again', '--role', 'viewer');
    expect(again.code).toBe(1);
    expect(again.json).toMatchObject({ ok: false, error: 'email_taken' });
    const bad = await cli(dataDir, 'users:invite', '--org', orgId, '--email', email, '--name', 'X', '--role', 'emperor');
    expect(bad.code).toBe(2);
    expect(bad.json).toMatchObject({ ok: false, error: 'invalid_arguments' });
  }, 60_000);

  it('keys:list lists both keys, the revoked one as revoked, with no secret and no hash', async () => {
    const r = await cli(dataDir, 'keys:list', '--org', orgId);
    expect(r.code).toBe(0);
    expectOneJsonLine(r);
    expect(r.json.org_id).toBe(orgId);
    const keys = r.json.keys as Array<Record<string, unknown>>;
    expect(keys.map((k) => [k.key_id, k.status])).toEqual(
      expect.arrayContaining([
        [testKey.key_id, 'active'],
        [liveKey.key_id, 'revoked'],
      ]),
    );
    expect(keys).toHaveLength(2);
    for (const k of [testKey, liveKey]) {
      expect(r.stdout).not.toContain(k.key);
      expect(r.stdout).not.toContain(k.key.slice(-48)); // the part of the secret that is not the key id
      expect(r.stdout).not.toContain(hashApiKey(k.key));
    }
    expect(r.stdout).not.toMatch(/hash/i);
  }, 30_000);

  it('fails with not_found (exit 1) for an unknown organization or key', async () => {
    const create = await cli(dataDir, 'keys:create', '--org', 'org_000000000000000000000000', '--scopes', 'payments:read', '--mode', 'test');
    expect(create.code).toBe(1);
    expectOneJsonLine(create);
    expect(create.json).toEqual({ ok: false, error: 'not_found', message: expect.stringContaining('org_000000000000000000000000') });

    const revoke = await cli(dataDir, 'keys:revoke', 'key_0000000000000000');
    expect(revoke.code).toBe(1);
    expect(revoke.json).toMatchObject({ ok: false, error: 'not_found' });
  }, 30_000);

  it('rejects a bad command line with exit 2 and a JSON error, before touching the store', async () => {
    const fresh = join(dataDir, 'never-opened'); // an embedded store would create <DATA_DIR>/pglite
    const scopes = await cli(fresh, 'keys:create', '--org', orgId, '--scopes', 'payments:write,payments:admin', '--mode', 'test');
    expect(scopes.code).toBe(2);
    expectOneJsonLine(scopes);
    expect(scopes.json).toMatchObject({ ok: false, error: 'invalid_arguments', details: { unknown_scopes: ['payments:admin'] } });
    for (const s of SCOPES) expect(scopes.json.message).toContain(s); // names the valid ones

    const mode = await cli(fresh, 'keys:create', '--org', orgId, '--scopes', 'payments:write', '--mode', 'prod');
    expect(mode.code).toBe(2);
    expect(mode.json).toMatchObject({ ok: false, error: 'invalid_arguments', message: expect.stringMatching(/--mode must be test or live/) });

    const noOrg = await cli(fresh, 'keys:list');
    expect(noOrg.code).toBe(2);
    expect(noOrg.json).toMatchObject({ ok: false, error: 'invalid_arguments', message: expect.stringContaining('--org') });

    const unknown = await cli(fresh, 'orgs:delete', orgId);
    expect(unknown.code).toBe(2);
    expect(unknown.json).toMatchObject({ ok: false, error: 'unknown_command' });
    expect(existsSync(fresh)).toBe(false);
  }, 60_000);

  it('a key made by keys:create authenticates; the revoked one no longer does', async () => {
    const { db, store } = await openEventStore({ databaseUrl, dataDir, migrations: accessMigrations });
    try {
      const access = new AccessService(new AccessReadModel(db), store);
      expect(await access.authenticate(parseApiKey(testKey.key)!)).toEqual({
        orgId,
        keyId: testKey.key_id,
        scopes: ['payments:write', 'certificates:write'],
        mode: 'test',
      });
      expect(await access.authenticate(parseApiKey(liveKey.key)!)).toBeNull();
    } finally {
      await store.close();
      await db.close();
    }
  }, 30_000);

  // The embedded store belongs to one process: a running server's lock keeps the CLI out.
  it('signing-keys list, rotate and revoke manage the authority keys', async () => {
    extraEnv = { KEY_ENCRYPTION_KEY: databaseUrl ? TEST_KEY_ENCRYPTION_KEY : undefined };
    try {
      const before = await cli(dataDir, 'signing-keys', 'list');
      expect(before.code).toBe(0);
      const active = (before.json.keys as { key_id: string; status: string }[]).find((k) => k.status === 'active')!;
      expect(JSON.stringify(before.json)).not.toMatch(/private|encrypted/);

      const rotated = await cli(dataDir, 'signing-keys', 'rotate');
      expectOneJsonLine(rotated);
      expect(rotated.json).toMatchObject({ retired: { key_id: active.key_id, status: 'retired' }, activated: { status: 'active' } });

      const after = await cli(dataDir, 'signing-keys', 'list');
      const statuses = Object.fromEntries((after.json.keys as { key_id: string; status: string }[]).map((k) => [k.key_id, k.status]));
      expect(statuses[active.key_id]).toBe('retired');
      expect(Object.values(statuses).filter((st) => st === 'active')).toHaveLength(1);

      const unknown = await cli(dataDir, 'signing-keys', 'revoke', '00000000-0000-4000-8000-000000000000');
      expect(unknown.code).toBe(1);
      expect(unknown.json).toMatchObject({ ok: false, error: 'not_found' });
      // Revoking a real key only on this test's own embedded store: in the PostgreSQL pass the
      // keys are shared with other suites running at the same time.
      if (!databaseUrl) {
        const revoked = await cli(dataDir, 'signing-keys', 'revoke', active.key_id);
        expect(revoked.code).toBe(0);
        expect(revoked.json).toMatchObject({ revoked: { key_id: active.key_id, status: 'revoked' } });
      }
    } finally {
      extraEnv = {};
    }
  }, 60_000);

  const embeddedOnly = databaseUrl ? () => undefined : it;
  embeddedOnly('refuses a DATA_DIR locked by a live process, with data_dir_in_use (exit 1)', async () => {
    const lock = join(dataDir, 'pglite', 'sigil.lock');
    mkdirSync(join(dataDir, 'pglite'), { recursive: true });
    writeFileSync(lock, String(process.pid)); // this jest worker stands in for the server
    try {
      const r = await cli(dataDir, 'keys:list', '--org', orgId);
      expect(r.code).toBe(1);
      expectOneJsonLine(r);
      expect(r.json).toMatchObject({ ok: false, error: 'data_dir_in_use' });
      expect(r.json.message).toContain(String(process.pid));
      expect(r.json.message).toContain(resolve(dataDir));
    } finally {
      rmSync(lock, { force: true });
    }
  }, 30_000);
});
