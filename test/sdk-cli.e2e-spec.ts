import { execFileSync, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { AccessService } from '@app/access';
import { eventHash, SqlDatabase } from '@app/event-store';
import { isolatedEnv } from './support/isolated-env';
import { startTestApp, TestApp } from './support/test-app';

const ROOT = join(__dirname, '..');

/** Runs a process to its end without blocking this one (the service under test answers from here). */
function runProcess(command: string, args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** `node scripts/sigil.js …`: what `npx sigil` runs. */
const sigil = (args: string[], env: Record<string, string> = {}) => runProcess(process.execPath, [join(ROOT, 'scripts/sigil.js'), ...args], env);

/**
 * The `sigil` command spawned as a process: online against the running service, then offline with
 * the service stopped (files and a keys document only), with its exit codes.
 */
describe('sigil CLI (e2e)', () => {
  let t: TestApp | null;
  let base: string;
  let key: string;
  let dir: string;
  const f = (name: string) => join(dir, name);
  let cert: { certificate_id: string; dataset_hash: string };
  let textCert: { dataset_hash: string };
  let txn: string;
  let blocked: string;
  let iso: Awaited<ReturnType<typeof isolatedEnv>> | undefined;
  const csv = 'id,label\n1,café\n';
  const json = { labels: ['cat', 'dog'], version: 2 };

  beforeAll(async () => {
    // Once per file: the CLI bundle (libs/sdk/dist/cli.cjs), when missing or stale.
    execFileSync(process.execPath, [join(ROOT, 'scripts/sdk-build.js'), 'cli'], { stdio: ['ignore', 'ignore', 'inherit'], timeout: 180_000 });
    dir = mkdtempSync(join(tmpdir(), 'sigil-cli-e2e-'));
    // Its own schema in the PostgreSQL pass: the answers name the signing key's status, and other
    // suites' apps rotate the shared key ring meanwhile.
    iso = await isolatedEnv();
    t = await startTestApp({ ...iso.env, RATE_LIMITS: 'off' });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    const access = t.app.get(AccessService);
    const org = await access.createOrganization(`cli-${randomBytes(3).toString('hex')}`);
    key = (await access.createApiKey(org.org_id, { scopes: ['certificates:write', 'payments:write', 'payments:read', 'receipts:read'], mode: 'test' })).key;
    const call = async (method: string, path: string, body?: unknown) => {
      const headers: Record<string, string> = { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) };
      const res = await fetch(`${base}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
      const answer = await res.json();
      expect({ path, status: res.status, answer: res.ok ? 'ok' : answer }).toEqual({ path, status: res.ok ? res.status : 200, answer: 'ok' });
      return answer;
    };
    cert = await call('POST', '/api/notary/create', { content: JSON.stringify(json, null, 2), filename: 'labels.json' });
    textCert = await call('POST', '/api/notary/create', { content: csv });
    await call('PUT', '/api/cdp/policies/default', { limits: { USD: { per_transaction_cents: 10_000 } } });
    const decision = await call('POST', '/api/cdp/authorize', { amount_cents: 700, currency: 'USD', merchant_id: 'm_cli', purpose_tag: 'software', expiration_iso: new Date(Date.now() + 3_600_000).toISOString() });
    txn = decision.transaction_id;
    await call('POST', `/api/cdp/transactions/${txn}/execute`);
    // What an auditor keeps: the signed payload, the keys document, the receipt, the timeline.
    const signed = await call('GET', `/api/certificates/${cert.certificate_id}/signed-payload`);
    writeFileSync(f('signed.json'), JSON.stringify(signed));
    writeFileSync(f('tampered.json'), JSON.stringify({ ...signed, payload: { ...signed.payload, rows: 99 } }));
    writeFileSync(f('keys.json'), JSON.stringify(await call('GET', '/.well-known/signing-keys.json')));
    const receipt = await call('GET', `/api/cdp/receipts/${txn}`);
    writeFileSync(f('receipt.json'), JSON.stringify(receipt));
    writeFileSync(f('tampered-receipt.json'), JSON.stringify({ ...receipt, payload: { ...receipt.payload, amount_cents: 7 } }));
    const timeline = await call('GET', `/api/cdp/transactions/${txn}/events`);
    writeFileSync(f('timeline.json'), JSON.stringify(timeline));
    // The same bundle cut short by its anchor, and with an anchor whose signature is forged (its event's hash recomputed, so the chain holds).
    writeFileSync(f('timeline-no-anchor.json'), JSON.stringify({ ...timeline, events: timeline.events.slice(0, -1) }));
    const forged = JSON.parse(JSON.stringify(timeline));
    const anchorEntry = forged.events[forged.events.length - 1];
    anchorEntry.stored.data.anchor.signature.value = anchorEntry.stored.data.anchor.signature.value.replace(/^./, (c: string) => (c === 'A' ? 'B' : 'A'));
    anchorEntry.metadata.anchor = anchorEntry.stored.data.anchor;
    anchorEntry.hash = anchorEntry.stored.hash = eventHash(anchorEntry.stored);
    writeFileSync(f('timeline-forged-anchor.json'), JSON.stringify(forged));
    // The receipt event rewritten and every hash after it rebuilt: the chain holds, but the anchor names the old hash.
    const rewritten = JSON.parse(JSON.stringify(timeline));
    const [issued, sealed] = rewritten.events.slice(-2);
    issued.stored.data.receipt_hash = issued.metadata.receipt_hash = 'sha256:' + 'e'.repeat(64);
    issued.hash = issued.stored.hash = eventHash(issued.stored);
    sealed.prev_hash = sealed.stored.prev_hash = issued.hash;
    sealed.hash = sealed.stored.hash = eventHash(sealed.stored);
    writeFileSync(f('timeline-mismatched-anchor.json'), JSON.stringify(rewritten));
    blocked = (await call('POST', '/api/cdp/authorize', { amount_cents: 70_000, currency: 'USD', merchant_id: 'm_cli', purpose_tag: 'software', expiration_iso: new Date(Date.now() + 3_600_000).toISOString() })).transaction_id;
    timeline.events[1].stored.data.decision = 'needs_review';
    writeFileSync(f('tampered-timeline.json'), JSON.stringify(timeline));
    writeFileSync(f('labels.json'), JSON.stringify(json));
    writeFileSync(f('labels.csv'), csv);
  }, 240_000);

  afterAll(async () => {
    await t?.close();
    await iso?.dispose();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  describe('online, against the running service', () => {
    it('verifies a certificate by id, checking the signature locally against the served keys', async () => {
      const r = await sigil(['verify', cert.certificate_id, '--base-url', base]);
      expect(r).toMatchObject({ code: 0, stderr: '' });
      expect(r.stdout).toMatch(new RegExp(`^valid: certificate ${cert.certificate_id} \\(service\\.cert\\.v1\\) signed by key \\S+ \\(active\\)`));
      const viaEnv = await sigil(['verify', cert.certificate_id, '--json'], { SIGIL_BASE_URL: base });
      expect(viaEnv.code).toBe(0);
      expect(JSON.parse(viaEnv.stdout)).toMatchObject({ ok: true, valid: true, certificate_id: cert.certificate_id, source: 'service' });
      // A file with the keys fetched from the service.
      expect(await sigil(['verify', f('tampered.json'), '--base-url', base])).toMatchObject({ code: 1, stdout: expect.stringMatching(/^invalid: signature_invalid/) });
    });

    it('exits 2 when the service answers an error', async () => {
      const r = await sigil(['verify', '00000000-0000-4000-8000-000000000000', '--base-url', base, '--json']);
      expect(r.code).toBe(2);
      expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, error: 'not_found' });
    });

    it('verifies a transaction timeline and binds its receipt to it, with the key from --api-key or SIGIL_API_KEY', async () => {
      const r = await sigil(['timeline', 'verify', txn, '--base-url', base, '--api-key', key]);
      expect(r).toMatchObject({ code: 0 });
      expect(r.stdout).toMatch(new RegExp(`^valid: transaction-${txn}: 6 events, hash chain intact, ended receipt_issued and anchored \\(key \\S+, active\\), and the receipt is bound to it`));
      expect(r.stdout).toMatch(/receipt: valid, signed by key \S+ \(active\)/);
      const viaEnv = await sigil(['timeline', 'verify', txn, '--json'], { SIGIL_BASE_URL: base, SIGIL_API_KEY: key });
      expect(viaEnv.code).toBe(0);
      expect(JSON.parse(viaEnv.stdout)).toMatchObject({ ok: true, valid: true, timeline: { valid: true, events: 6, anchor: { state: 'anchored', terminal_status: 'receipt_issued' } }, receipt: { valid: true } });
      expect(await sigil(['timeline', 'verify', txn, '--base-url', base, '--api-key', 'cdp_test_nope'])).toMatchObject({ code: 2, stderr: expect.stringContaining('401 auth_required') });
    });

    it('a timeline cut short in the database is invalid: its anchor gone, or its anchor and terminal event', async () => {
      expect(await sigil(['timeline', 'verify', blocked, '--base-url', base, '--api-key', key])).toMatchObject({ code: 0, stdout: expect.stringContaining('3 events, hash chain intact, ended rejected and anchored') });
      const db = t!.app.get(SqlDatabase);
      const stream = `transaction-${blocked}`;
      await db.query(`DELETE FROM events WHERE stream_id = $1 AND revision = 2`, [stream]);
      const noAnchor = await sigil(['timeline', 'verify', blocked, '--base-url', base, '--api-key', key]);
      expect(noAnchor).toMatchObject({ code: 1, stdout: expect.stringMatching(/^invalid: anchor_missing: transaction-\S+ at revision 2: the timeline ends rejected at revision 1 without the anchor/) });
      await db.query(`DELETE FROM events WHERE stream_id = $1 AND revision = 1`, [stream]);
      // The events alone now look open; the transaction's status, read from the service, says it ended.
      const cut = await sigil(['timeline', 'verify', blocked, '--base-url', base, '--api-key', key, '--json']);
      expect(cut.code).toBe(1);
      expect(JSON.parse(cut.stdout)).toMatchObject({ ok: true, valid: false, timeline: { reason: 'truncated', anchor: { state: 'truncated', terminal_status: 'rejected' } } });
    });

    it('runs as `npx sigil` from the repository (the root package’s bin)', async () => {
      const npmCli = process.env.npm_execpath;
      const npx = npmCli && existsSync(join(dirname(npmCli), 'npx-cli.js')) ? [process.execPath, join(dirname(npmCli), 'npx-cli.js')] : ['npx'];
      const r = await runProcess(npx[0], [...npx.slice(1), '--no', 'sigil', 'verify', cert.certificate_id, '--base-url', base]);
      expect(r).toMatchObject({ code: 0, stdout: expect.stringMatching(/^valid: certificate /) });
    });
  });

  describe('offline, with the service stopped', () => {
    beforeAll(async () => {
      await t!.close();
      t = null;
    });

    it('the service is gone: asking it is a network error, exit 2', async () => {
      const r = await sigil(['verify', cert.certificate_id, '--base-url', base, '--attempts', '1']);
      expect(r).toMatchObject({ code: 2, stderr: expect.stringContaining('cannot reach the service') });
    });

    it('verifies a signed payload with a keys document: 0 genuine, 1 tampered', async () => {
      expect(await sigil(['verify', f('signed.json'), '--keys', f('keys.json')])).toMatchObject({ code: 0, stdout: expect.stringMatching(/^valid: certificate /) });
      const bad = await sigil(['verify', f('tampered.json'), '--keys', f('keys.json'), '--json']);
      expect(bad.code).toBe(1);
      expect(JSON.parse(bad.stdout)).toMatchObject({ ok: true, valid: false, reason: 'signature_invalid' });
      // The artifact itself, pretty or compact, against the certified hash.
      expect(await sigil(['verify', f('signed.json'), '--keys', f('keys.json'), '--artifact', f('labels.json')])).toMatchObject({ code: 0, stdout: expect.stringContaining('matches its dataset_hash') });
      expect(await sigil(['verify', f('signed.json'), '--keys', f('keys.json'), '--artifact', f('labels.csv')])).toMatchObject({ code: 1, stdout: expect.stringMatching(/^invalid: artifact_hash_mismatch/) });
    });

    it('verifies a receipt: 0 genuine, 1 tampered', async () => {
      expect(await sigil(['receipt', 'verify', f('receipt.json'), '--keys', f('keys.json')])).toMatchObject({ code: 0, stdout: expect.stringMatching(/^valid: payment_receipt\.v1 /) });
      expect(await sigil(['receipt', 'verify', f('tampered-receipt.json'), '--keys', f('keys.json')])).toMatchObject({ code: 1, stdout: expect.stringMatching(/^invalid: receipt_hash_mismatch/) });
    });

    it('verifies a saved timeline with its receipt: 0 genuine, 1 tampered', async () => {
      const ok = await sigil(['timeline', 'verify', f('timeline.json'), '--receipt', f('receipt.json'), '--keys', f('keys.json')]);
      expect(ok).toMatchObject({ code: 0, stdout: expect.stringContaining('6 events, hash chain intact, ended receipt_issued and anchored') });
      expect(ok.stdout).toContain('and the receipt is bound to it');
      const bad = await sigil(['timeline', 'verify', f('tampered-timeline.json'), '--receipt', f('receipt.json'), '--keys', f('keys.json'), '--json']);
      expect(bad.code).toBe(1);
      expect(JSON.parse(bad.stdout)).toMatchObject({ valid: false, timeline: { reason: 'hash_mismatch', broken_at_revision: 1 } });
    });

    it('a saved timeline without its anchor, with a forged one, or with one naming another hash, is invalid; a terminal one needs the keys', async () => {
      const cut = await sigil(['timeline', 'verify', f('timeline-no-anchor.json'), '--keys', f('keys.json')]);
      expect(cut).toMatchObject({ code: 1, stdout: expect.stringMatching(/^invalid: anchor_missing: transaction-\S+ at revision 5: the timeline ends receipt_issued at revision 4 without the anchor that must follow its terminal event/) });
      const forged = await sigil(['timeline', 'verify', f('timeline-forged-anchor.json'), '--keys', f('keys.json'), '--json']);
      expect(forged.code).toBe(1);
      expect(JSON.parse(forged.stdout)).toMatchObject({ valid: false, timeline: { reason: 'anchor_signature_invalid', anchor: { state: 'signature_invalid' } } });
      const mismatched = await sigil(['timeline', 'verify', f('timeline-mismatched-anchor.json'), '--keys', f('keys.json')]);
      expect(mismatched).toMatchObject({ code: 1, stdout: expect.stringMatching(/^invalid: anchor_mismatch: transaction-\S+ at revision 5: the anchor's last_event_hash is "sha256:[0-9a-f]{64}", the timeline's "sha256:[0-9a-f]{64}"/) });
      // Checking an anchor needs the keys: a file, or the service (gone here).
      expect(await sigil(['timeline', 'verify', f('timeline.json')])).toMatchObject({ code: 2, stderr: expect.stringContaining('needs the signing keys') });
    });

    it('hashes files exactly as the service did at issuance', async () => {
      expect(await sigil(['hash', f('labels.json')])).toEqual({ code: 0, stdout: `${cert.dataset_hash}\n`, stderr: '' });
      expect(await sigil(['hash', f('labels.csv')])).toEqual({ code: 0, stdout: `${textCert.dataset_hash}\n`, stderr: '' });
      const bytes = randomBytes(64);
      bytes[0] = 0xff; // never valid UTF-8: hashed as raw bytes
      writeFileSync(f('blob.bin'), bytes);
      expect((await sigil(['hash', f('blob.bin')])).stdout).toBe(`sha256:${createHash('sha256').update(bytes).digest('hex')}\n`);
    });

    it('exits 2 on a usage error', async () => {
      expect(await sigil(['verify', f('signed.json')])).toMatchObject({ code: 2, stderr: expect.stringContaining('give --keys keys.json to stay offline') });
      expect(await sigil(['hash'])).toMatchObject({ code: 2, stderr: expect.stringContaining('expected one file') });
    });
  });
});
