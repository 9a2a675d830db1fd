import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { canonicalJson } from '@app/crypto';
import { ServerSigner } from '../test/server-signer';
import { run } from './run';

/** The `sigil` command in-process (the e2e spec spawns the built one against a real service). */
describe('sigil CLI', () => {
  let dir: string;
  const server = new ServerSigner();
  const keys = server.keysDocument();
  const signed = server.manifest(server.payload());
  const receipt = server.receipt({ transaction_id: 'txn_1', amount_cents: 1250, currency: 'USD', issued_at: '2025-03-01T00:00:00.000Z' });

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'sigil-cli-'));
    const files: Record<string, unknown> = {
      'keys.json': keys,
      'signed.json': signed,
      'tampered.json': { ...signed, payload: { ...signed.payload, rows: 9 } },
      'receipt.json': receipt,
      'wrapped-receipt.json': { receipt },
      'tampered-receipt.json': { ...receipt, payload: { ...receipt.payload, amount_cents: 1 } },
    };
    for (const [name, value] of Object.entries(files)) writeFileSync(join(dir, name), JSON.stringify(value, null, 2));
    writeFileSync(join(dir, 'not-json.json'), 'nope');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const sigil = async (...argv: string[]) => {
    const out: string[] = [];
    const err: string[] = [];
    const fetchCalls: string[] = [];
    const code = await run(argv, {
      stdout: (t) => out.push(t),
      stderr: (t) => err.push(t),
      env: {},
      version: '9.9.9',
      fetch: (async (url: string) => {
        fetchCalls.push(String(url));
        throw new TypeError('fetch failed');
      }) as unknown as typeof fetch,
    });
    return { code, stdout: out.join(''), stderr: err.join(''), fetchCalls };
  };
  const f = (name: string) => join(dir, name);

  it('verifies a signed payload offline with a keys document: 0 valid, 1 invalid, nothing fetched', async () => {
    const ok = await sigil('verify', f('signed.json'), '--keys', f('keys.json'));
    expect(ok).toMatchObject({ code: 0, stderr: '', fetchCalls: [] });
    expect(ok.stdout).toBe(`valid: certificate ${signed.payload.certification_id} (service.cert.v1) signed by key ${signed.signature.key_id} (active), issued ${signed.payload.timestamp}\n`);
    const bad = await sigil('verify', f('tampered.json'), `--keys=${f('keys.json')}`);
    expect(bad).toMatchObject({ code: 1, fetchCalls: [] });
    expect(bad.stdout).toMatch(/^invalid: signature_invalid: certificate /);
    const otherKeys = await sigil('verify', f('signed.json'), '--keys', f('receipt.json'));
    expect(otherKeys).toMatchObject({ code: 1, stdout: expect.stringMatching(/^invalid: invalid_keys_document/) });
  });

  it('--json prints one object: the verification, or the error', async () => {
    const ok = await sigil('verify', f('signed.json'), '--keys', f('keys.json'), '--json');
    expect(JSON.parse(ok.stdout)).toMatchObject({ ok: true, valid: true, key_status: 'active', certificate_id: signed.payload.certification_id, source: f('signed.json') });
    const bad = await sigil('--json', 'verify', f('tampered.json'), '--keys', f('keys.json'));
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.stdout)).toMatchObject({ ok: true, valid: false, reason: 'signature_invalid' });
    const usage = await sigil('verify', f('signed.json'), '--json');
    expect(usage.code).toBe(2);
    expect(JSON.parse(usage.stdout)).toEqual({ ok: false, error: 'usage', message: expect.stringContaining('--base-url') });
  });

  it('checks an artifact against the certified hash', async () => {
    const content = '[{"a":1}]';
    const withHash = server.manifest(server.payload({ dataset_hash: `sha256:${createHash('sha256').update(canonicalJson(JSON.parse(content))).digest('hex')}` }));
    writeFileSync(f('artifact-cert.json'), JSON.stringify(withHash));
    writeFileSync(f('artifact.json'), '[ { "a" : 1 } ]\n');
    writeFileSync(f('other.json'), '[{"a":2}]');
    expect(await sigil('verify', f('artifact-cert.json'), '--keys', f('keys.json'), '--artifact', f('artifact.json'))).toMatchObject({ code: 0, stdout: expect.stringContaining('artifact.json matches its dataset_hash') });
    const other = await sigil('verify', f('artifact-cert.json'), '--keys', f('keys.json'), '--artifact', f('other.json'));
    expect(other).toMatchObject({ code: 1, stdout: expect.stringMatching(/^invalid: artifact_hash_mismatch: .*other\.json hashes to sha256:/) });
  });

  it('verifies receipts offline, also as {receipt}', async () => {
    expect(await sigil('receipt', 'verify', f('receipt.json'), '--keys', f('keys.json'))).toMatchObject({ code: 0, stdout: expect.stringMatching(/^valid: payment_receipt\.v1 sha256:[0-9a-f]{64} signed by key /) });
    expect(await sigil('receipt', 'verify', f('wrapped-receipt.json'), '--keys', f('keys.json'))).toMatchObject({ code: 0 });
    expect(await sigil('receipt', 'verify', f('tampered-receipt.json'), '--keys', f('keys.json'))).toMatchObject({ code: 1, stdout: expect.stringMatching(/^invalid: receipt_hash_mismatch/) });
  });

  it('hashes files as the service does: JSON in its RFC 8785 form, anything else as raw bytes', async () => {
    const data = { b: [1, 2.5, 'é'], a: null };
    writeFileSync(f('pretty.json'), JSON.stringify(data, null, 4));
    writeFileSync(f('compact.json'), JSON.stringify(data));
    const jcs = `sha256:${createHash('sha256').update(canonicalJson(data)).digest('hex')}`;
    expect(await sigil('hash', f('pretty.json'))).toMatchObject({ code: 0, stdout: `${jcs}\n` });
    expect(await sigil('hash', f('compact.json'))).toMatchObject({ code: 0, stdout: `${jcs}\n` });
    const text = 'id,label\r\n1,café\r\n';
    writeFileSync(f('labels.csv'), text);
    const raw = `sha256:${createHash('sha256').update(text, 'utf8').digest('hex')}`;
    expect(JSON.parse((await sigil('hash', f('labels.csv'), '--json')).stdout)).toEqual({ ok: true, hash: raw, algorithm: 'sha256', file: f('labels.csv') });
    // Not UTF-8 (a PNG header): the raw bytes, never a decoded-and-replaced string.
    const binary = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0xff, 0xfe, 0x00]);
    writeFileSync(f('image.png'), binary);
    expect((await sigil('hash', f('image.png'))).stdout).toBe(`sha256:${createHash('sha256').update(binary).digest('hex')}\n`);
    // JSON the service refuses to certify (a number out of range) cannot be hashed as it would.
    writeFileSync(f('huge.json'), '[1e400]');
    expect(await sigil('hash', f('huge.json'))).toMatchObject({ code: 2, stderr: expect.stringContaining('cannot be certified') });
  });

  it('exits 2 on usage errors, unreadable input and unreachable services', async () => {
    expect(await sigil()).toMatchObject({ code: 2, stderr: expect.stringContaining('usage: sigil') });
    expect(await sigil('frobnicate')).toMatchObject({ code: 2, stderr: expect.stringContaining('unknown command: frobnicate') });
    expect(await sigil('verify', f('signed.json'), '--keys', f('keys.json'), '--colour')).toMatchObject({ code: 2, stderr: expect.stringContaining('unknown option --colour') });
    expect(await sigil('verify', f('signed.json'), '--keys')).toMatchObject({ code: 2, stderr: expect.stringContaining('--keys needs a value') });
    expect(await sigil('verify', f('missing.json'), '--keys', f('keys.json'))).toMatchObject({ code: 2, stderr: expect.stringContaining('ENOENT') });
    expect(await sigil('verify', f('not-json.json'), '--keys', f('keys.json'))).toMatchObject({ code: 2, stderr: expect.stringContaining('is not JSON') });
    expect(await sigil('receipt', 'check', f('receipt.json'))).toMatchObject({ code: 2 });
    expect(await sigil('timeline', 'verify', 'txn_0123456789abcdef0123456789abcdef', '--base-url', 'http://127.0.0.1:9')).toMatchObject({ code: 2, stderr: expect.stringContaining('--api-key') });
    const down = await sigil('verify', '00000000-0000-4000-8000-000000000000', '--base-url', 'http://127.0.0.1:9', '--attempts', '1');
    expect(down).toMatchObject({ code: 2, stderr: expect.stringContaining('cannot reach the service'), fetchCalls: ['http://127.0.0.1:9/api/certificates/00000000-0000-4000-8000-000000000000/signed-payload'] });
    expect(await sigil('--version')).toMatchObject({ code: 0, stdout: '9.9.9\n' });
    expect(await sigil('help')).toMatchObject({ code: 0, stdout: expect.stringContaining('sigil hash <file>') });
  });
});
