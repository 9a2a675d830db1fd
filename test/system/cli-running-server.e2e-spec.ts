import { ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { expectOneJsonLine, runCli } from '../support/run-cli';

/**
 * The admin CLI against a running embedded server (`npm start` without DATABASE_URL holds its
 * DATA_DIR): both spawned as processes the way an operator runs them. The CLI's commands run
 * inside the server through its operator channel (a Unix socket in DATA_DIR/operator/); when no
 * server answers there, the CLI says what to do and exits 1. Embedded mode only: with
 * DATABASE_URL the CLI opens PostgreSQL itself (test/system/cli.e2e-spec.ts).
 */
const root = resolve(__dirname, '../..');
const embedded = !process.env.DATABASE_URL;

const baseEnv = (dataDir: string) => ({ PATH: process.env.PATH, HOME: process.env.HOME, DATA_DIR: dataDir, DATABASE_URL: process.env.DATABASE_URL });

/** The CLI as `npm run cli` runs it, on this data directory (and the pass's DATABASE_URL). */
const cli = (dataDir: string, ...args: string[]) => runCli({ DATA_DIR: dataDir, DATABASE_URL: process.env.DATABASE_URL }, args);

const freePort = () =>
  new Promise<number>((res) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => res(port));
    });
  });

/** One raw request on the operator socket; the server's one-line answer. */
function rawRequest(socketPath: string, line: string): Promise<Record<string, unknown>> {
  return new Promise((res, rej) => {
    const s = createConnection(socketPath, () => s.write(line));
    let data = '';
    s.on('data', (d) => (data += String(d)));
    s.on('error', rej);
    s.on('close', () => res(JSON.parse(data.split('\n')[0])));
  });
}

if (!embedded) {
  // With DATABASE_URL the server and the CLI share PostgreSQL: DATA_DIR's lock is no business of the CLI's.
  describe('npm run cli beside a running server (PostgreSQL)', () => {
    it('opens PostgreSQL itself, whoever holds DATA_DIR', async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'sigil-op-pg-'));
      try {
        mkdirSync(join(dataDir, 'pglite'), { recursive: true });
        writeFileSync(join(dataDir, 'pglite', 'sigil.lock'), String(process.pid));
        const r = await cli(dataDir, 'orgs:create', 'Beside A Server');
        expect(r.code).toBe(0);
        expect(r.json).toMatchObject({ org_id: expect.stringMatching(/^org_/) });
        expect(r.stderr).not.toContain('ran through the running server');
      } finally {
        rmSync(dataDir, { recursive: true, force: true });
      }
    }, 60_000);
  });
}

(embedded ? describe : () => undefined)('npm run cli while npm start runs on the same embedded DATA_DIR', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'sigil-op-'));
  let server: ChildProcess;
  let url: string;
  let serverLog = '';

  beforeAll(async () => {
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    server = spawn(process.execPath, [join(root, 'scripts/start.js'), 'api'], {
      cwd: root,
      env: { ...baseEnv(dataDir), PORT: String(port), BASE_URL: url, LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    server.stdout!.on('data', (d) => (serverLog += String(d)));
    server.stderr!.on('data', (d) => (serverLog += String(d)));
    const end = Date.now() + 60_000;
    for (;;) {
      if (server.exitCode !== null) throw new Error(`server exited: ${serverLog}`);
      if (await fetch(`${url}/healthz`).then((r) => r.ok, () => false)) break;
      if (Date.now() > end) throw new Error(`server not healthy: ${serverLog}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }, 90_000);

  afterAll(async () => {
    if (server && server.exitCode === null) {
      const exited = new Promise((r) => server.once('exit', r));
      server.kill('SIGTERM');
      await exited;
    }
    rmSync(dataDir, { recursive: true, force: true });
  }, 30_000);

  it('keeps its operator channel in DATA_DIR/operator (0700), the token and the socket 0600', () => {
    const dir = join(dataDir, 'operator');
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir, 'token')).mode & 0o777).toBe(0o600);
    const sock = statSync(join(dir, 'cli.sock'));
    expect(sock.isSocket()).toBe(true);
    expect(sock.mode & 0o777).toBe(0o600);
  });

  it('orgs:create, keys:create, keys:list, users:invite and keys:revoke run through the server; the API takes the key at once', async () => {
    const org = await cli(dataDir, 'orgs:create', 'Operator Org');
    expect(org.code).toBe(0);
    expectOneJsonLine(org);
    expect(org.json).toMatchObject({ org_id: expect.stringMatching(/^org_/), name: 'Operator Org' });
    expect(org.stderr).toContain('ran through the running server');
    const orgId = org.json.org_id as string;

    const key = await cli(dataDir, 'keys:create', '--org', orgId, '--scopes', 'payments:read', '--mode', 'test');
    expect(key.code).toBe(0);
    expect(key.json).toMatchObject({ key: expect.stringMatching(/^cdp_test_/), org_id: orgId });
    const auth = { authorization: `Bearer ${key.json.key as string}` };
    expect((await fetch(`${url}/api/cdp/transactions`, { headers: auth })).status).toBe(200);

    const listed = await cli(dataDir, 'keys:list', '--org', orgId);
    expect(listed.code).toBe(0);
    expect(listed.json).toMatchObject({ org_id: orgId, keys: [expect.objectContaining({ key_id: key.json.key_id })] });

    const invite = await cli(dataDir, 'users:invite', '--org', orgId, '--email', 'op@example.com', '--name', 'Op Erator');
    expect(invite.code).toBe(0);
    expect(invite.json).toMatchObject({ url: expect.stringContaining(`${url}/console/`), user: expect.objectContaining({ email: 'op@example.com', role: 'owner' }) });
    // The link signs the person in on this server.
    const signIn = await fetch(invite.json.url as string, { redirect: 'manual' });
    expect(signIn.status).toBeLessThan(400);

    const revoked = await cli(dataDir, 'keys:revoke', key.json.key_id as string);
    expect(revoked.code).toBe(0);
    expect((await fetch(`${url}/api/cdp/transactions`, { headers: auth })).status).toBe(401);
  }, 120_000);

  it('signing-keys rotate runs in the server, which publishes the new active key at once', async () => {
    const before = (await (await fetch(`${url}/.well-known/signing-keys.json`)).json()) as { keys: { key_id: string; status: string }[] };
    const rotated = await cli(dataDir, 'signing-keys', 'rotate');
    expect(rotated.code).toBe(0);
    expectOneJsonLine(rotated);
    const after = (await (await fetch(`${url}/.well-known/signing-keys.json`)).json()) as { keys: { key_id: string; status: string }[] };
    const active = after.keys.filter((k) => k.status === 'active');
    expect(active).toHaveLength(1);
    expect(before.keys.map((k) => k.key_id)).not.toContain(active[0].key_id);
    const list = await cli(dataDir, 'signing-keys', 'list');
    expect(list.json).toMatchObject({ keys: expect.arrayContaining([expect.objectContaining({ key_id: active[0].key_id, status: 'active' })]) });
  }, 60_000);

  it("a command the server refuses keeps the CLI's error and exit code (unknown organization: not_found, exit 1)", async () => {
    const r = await cli(dataDir, 'keys:create', '--org', 'org_000000000000000000000000', '--scopes', 'payments:read', '--mode', 'test');
    expect(r.code).toBe(1);
    expectOneJsonLine(r);
    expect(r.json).toMatchObject({ ok: false, error: 'not_found' });
    // A wrong command line is still refused before anything is sent (exit 2).
    const bad = await cli(dataDir, 'keys:create', '--org', 'org_x', '--scopes', 'nope', '--mode', 'test');
    expect(bad.code).toBe(2);
    expect(bad.json).toMatchObject({ ok: false, error: 'invalid_arguments' });
  }, 60_000);

  it('refuses a request on the socket without the token, or not JSON', async () => {
    const sock = join(dataDir, 'operator', 'cli.sock');
    expect(await rawRequest(sock, `${JSON.stringify({ token: 'ab'.repeat(32), command: { command: 'orgs:create', name: 'x' } })}\n`)).toMatchObject({ ok: false, error: 'auth_required' });
    expect(await rawRequest(sock, `${JSON.stringify({ command: { command: 'orgs:create', name: 'x' } })}\n`)).toMatchObject({ ok: false, error: 'auth_required' });
    expect(await rawRequest(sock, 'not json\n')).toMatchObject({ ok: false, error: 'bad_request' });
  });

  it('parses the sent command line again with the CLI\u2019s own checks: a pre-parsed command is refused', async () => {
    const sock = join(dataDir, 'operator', 'cli.sock');
    const token = readFileSync(join(dataDir, 'operator', 'token'), 'utf8').trim();
    const send = (body: object) => rawRequest(sock, `${JSON.stringify({ token, ...body })}\n`);
    // The old shape (a command object, unchecked scopes and mode) is no request at all.
    const forged = { command: 'keys:create', orgId: 'org_x', scopes: ['keys:manage', 'payments:steal'], mode: 'prod', name: null, owner: null };
    expect(await send({ command: forged })).toMatchObject({ ok: false, error: 'bad_request' });
    for (const argv of [[], 'orgs:create x', [1, 2], ['help']]) expect(await send({ argv })).toMatchObject({ ok: false, error: 'bad_request' });
    // The same checks as on the command line: exit code 2, nothing done.
    expect(await send({ argv: ['keys:create', '--org', 'org_x', '--scopes', 'payments:steal', '--mode', 'test'] })).toMatchObject({ ok: false, error: 'invalid_arguments', exit_code: 2 });
    expect(await send({ argv: ['keys:create', '--org', 'org_x', '--scopes', 'payments:read', '--mode', 'prod'] })).toMatchObject({ ok: false, exit_code: 2 });
    expect(await send({ argv: ['nope'] })).toMatchObject({ ok: false, error: 'unknown_command', exit_code: 2 });
    // A legacy import without its file's text is refused as an unreadable file.
    expect(await send({ argv: ['certificates', 'import-legacy', 'x.json', '--org', 'org_x'] })).toMatchObject({ ok: false, error: 'invalid_legacy_file', exit_code: 2 });
    // A good command line runs.
    expect(await send({ argv: ['orgs:create', 'Through argv'] })).toMatchObject({ ok: true, result: { org_id: expect.stringMatching(/^org_/), name: 'Through argv' } });
  });

  it('says what to do, exit 1, when the process holding DATA_DIR does not answer on the channel', async () => {
    const other = mkdtempSync(join(tmpdir(), 'sigil-op-held-'));
    try {
      mkdirSync(join(other, 'pglite'), { recursive: true });
      writeFileSync(join(other, 'pglite', 'sigil.lock'), String(process.pid)); // this jest worker: alive, not a server
      const r = await cli(other, 'orgs:create', 'Nobody');
      expect(r.code).toBe(1);
      expectOneJsonLine(r);
      expect(r.json).toMatchObject({ ok: false, error: 'data_dir_in_use' });
      expect(r.json.message).toContain(String(process.pid));
      expect(r.json.message).toContain('Stop that process');
      expect(r.json.message).toContain('DATABASE_URL');
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  }, 60_000);

  it('the server removes its socket and token when it stops; the CLI then opens the store itself', async () => {
    const exited = new Promise((r) => server.once('exit', r));
    server.kill('SIGTERM');
    await exited;
    expect(() => statSync(join(dataDir, 'operator', 'cli.sock'))).toThrow();
    expect(() => statSync(join(dataDir, 'operator', 'token'))).toThrow();
    const r = await cli(dataDir, 'orgs:create', 'After Stop');
    expect(r.code).toBe(0);
    expect(r.stderr).not.toContain('ran through the running server');
  }, 60_000);
});
