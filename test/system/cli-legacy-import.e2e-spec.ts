import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openEventStore } from '@app/event-store';
import { certificateMigrations, certificateStream, SIGNING_KEYS_STREAM, signingKeyMigrations } from '@app/notary';
import { legacyManifest, LegacyManifestFile, legacySignature, legacySigner } from '../support/legacy-certificates';
import { CliRun, expectOneJsonLine, runCli } from '../support/run-cli';
import { TEST_KEY_ENCRYPTION_KEY } from '../support/test-kek';

/**
 * `npm run cli -- certificates import-legacy <file> --org <org_id>` as a child process, on a fresh
 * embedded DATA_DIR or on PostgreSQL when DATABASE_URL is set (the shared test database: the
 * suite only looks at its own organization, keys and certificates).
 */
const databaseUrl = process.env.DATABASE_URL;

describe(`npm run cli -- certificates import-legacy (${databaseUrl ? 'PostgreSQL' : 'embedded'})`, () => {
  const dir = mkdtempSync(join(tmpdir(), 'sigil-legacy-'));
  const dataDir = join(dir, 'data');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  // The import registers keys, so it needs the key-encryption key (embedded mode keeps one in DATA_DIR).
  const cli = (...args: string[]): Promise<CliRun> =>
    runCli({ DATA_DIR: dataDir, DATABASE_URL: databaseUrl, KEY_ENCRYPTION_KEY: databaseUrl ? TEST_KEY_ENCRYPTION_KEY : undefined }, args);
  let n = 0;
  const file = (content: unknown): string => {
    const path = join(dir, `legacy-${n++}.json`);
    writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content, null, 2));
    return path;
  };
  const importFile = (path: string, org = orgId) => cli('certificates', 'import-legacy', path, '--org', org);

  /** What the store holds, read after the CLI has exited (the embedded store has one user at a time). */
  async function stored(certificateIds: string[], keyId: string) {
    const { db, store } = await openEventStore({ databaseUrl, dataDir, migrations: [...signingKeyMigrations, ...certificateMigrations] });
    try {
      const certificates = await db.query<{ certificate_id: string; org_id: string; imported: boolean; schema_version: string }>(
        'SELECT certificate_id, org_id, imported, schema_version FROM certificates WHERE certificate_id = ANY($1::uuid[]) ORDER BY certificate_id',
        [certificateIds],
      );
      const streams = await Promise.all(certificateIds.map(async (id) => (await store.readStream(certificateStream(id))).map((e) => e.type)));
      const [key] = await db.query<{ status: string; retired_at: Date | null }>('SELECT status, retired_at FROM signing_keys WHERE key_id = $1', [keyId]);
      const secrets = await db.query('SELECT 1 FROM signing_key_secrets WHERE key_id = $1', [keyId]);
      const keyEvents = (await store.readStream(SIGNING_KEYS_STREAM)).filter((e) => (e.data as { key_id: string }).key_id === keyId).map((e) => e.type);
      return { certificates, streams, key: key ?? null, secrets: secrets.length, keyEvents };
    } finally {
      await store.close();
      await db.close();
    }
  }

  let orgId: string;
  const signer = legacySigner();
  const first = legacyManifest(signer, { filename: 'labels.csv' });
  const second = legacyManifest(signer, { timestamp: '2023-11-05T08:30:00+01:00' }, { withPublicKey: false });
  let goodFile: string;

  // First, so that a needed build happens once.
  it('sets up an organization', async () => {
    const r = await cli('orgs:create', 'Legacy Import Org');
    expect(r.code).toBe(0);
    orgId = r.json.org_id as string;
  }, 60_000);

  it('imports a file of legacy certificates; the legacy key becomes a retired, verify-only key', async () => {
    goodFile = file([first, second]);
    const r = await importFile(goodFile);
    expect(r.code).toBe(0);
    expectOneJsonLine(r);
    expect(r.json).toEqual({
      file: goodFile,
      org_id: orgId,
      imported: 2,
      already_imported: 0,
      keys_registered: [
        {
          key_id: signer.keyId,
          algorithm: 'Ed25519',
          public_key: signer.publicKey,
          created_at: '2023-11-05T07:30:00.000Z',
          status: 'retired',
          retired_at: expect.any(String),
          revoked_at: null,
        },
      ],
      certificates: [
        { certificate_id: first.payload.certification_id, key_id: signer.keyId, status: 'imported' },
        { certificate_id: second.payload.certification_id, key_id: signer.keyId, status: 'imported' },
      ],
    });
    expect(r.stderr).toMatch(/imported 2, already present 0, legacy keys registered 1/);

    const keys = await cli('signing-keys', 'list');
    const listed = (keys.json.keys as Array<{ key_id: string; status: string }>) ?? [];
    expect(listed.find((k) => k.key_id === signer.keyId)).toMatchObject({ status: 'retired', public_key: signer.publicKey });
    expect(listed.filter((k) => k.status === 'active')).toHaveLength(1);
    expect(JSON.stringify(keys.json)).not.toMatch(/private|encrypted/);

    const s = await stored([first.payload.certification_id, second.payload.certification_id], signer.keyId);
    expect(s.certificates.map((c) => [c.org_id, c.imported, c.schema_version])).toEqual([
      [orgId, true, 'cert.v2'],
      [orgId, true, 'cert.v2'],
    ]);
    expect(s.streams).toEqual([['certificate.imported'], ['certificate.imported']]);
    expect(s.key?.status).toBe('retired');
    expect(s.secrets).toBe(0); // we hold no private key for it
    expect(s.keyEvents).toEqual(['signing_key.imported']);
  }, 60_000);

  it('importing the same file again imports nothing new', async () => {
    const r = await importFile(goodFile);
    expect(r.code).toBe(0);
    expectOneJsonLine(r);
    expect(r.json).toMatchObject({ imported: 0, already_imported: 2, keys_registered: [] });
    expect((r.json.certificates as Array<{ status: string }>).map((c) => c.status)).toEqual(['already_imported', 'already_imported']);
    const s = await stored([first.payload.certification_id, second.payload.certification_id], signer.keyId);
    expect(s.streams).toEqual([['certificate.imported'], ['certificate.imported']]);
    expect(s.keyEvents).toEqual(['signing_key.imported']);
  }, 60_000);

  it('takes a single manifest (not an array) signed by an already registered key, without its public_key', async () => {
    const single = legacyManifest(signer, {}, { withPublicKey: false });
    const r = await importFile(file(single));
    expect(r.code).toBe(0);
    expect(r.json).toMatchObject({ imported: 1, already_imported: 0, keys_registered: [] });
  }, 60_000);

  it('refuses a forged signature with a reason, and writes nothing of the file', async () => {
    const newSigner = legacySigner();
    const fine = legacyManifest(newSigner);
    const forged = legacyManifest(newSigner);
    forged.signature.value = legacySignature(legacySigner(), forged.payload);
    const r = await importFile(file([fine, forged]));
    expect(r.code).toBe(1);
    expectOneJsonLine(r);
    expect(r.json).toMatchObject({ ok: false, error: 'legacy_import_refused', message: expect.stringMatching(/nothing was imported.*signature_invalid/) });
    expect((r.json.details as { refused: unknown[] }).refused).toEqual([
      { index: 1, certificate_id: forged.payload.certification_id, key_id: newSigner.keyId, reason: 'signature_invalid', message: expect.any(String) },
    ]);
    const s = await stored([fine.payload.certification_id, forged.payload.certification_id], newSigner.keyId);
    expect(s).toMatchObject({ certificates: [], streams: [[], []], key: null, keyEvents: [] });
  }, 60_000);

  it('reports a certificate id already present with other content as a conflict', async () => {
    const changed = legacyManifest(signer, { certification_id: first.payload.certification_id, rows: 999 });
    const r = await importFile(file(changed));
    expect(r.code).toBe(1);
    expect(r.json).toMatchObject({ ok: false, error: 'legacy_import_refused', details: { refused: [{ index: 0, certificate_id: first.payload.certification_id, reason: 'certificate_conflict' }] } });
  }, 60_000);

  it('refuses any schema version but cert.v2', async () => {
    const r = await importFile(file([legacyManifest(signer, { schema_version: 'cert.v9' }, { withPublicKey: false })]));
    expect(r.code).toBe(1);
    expect(r.json).toMatchObject({ error: 'legacy_import_refused', details: { refused: [{ reason: 'unsupported_schema_version' }] } });
  }, 60_000);

  it('answers not_found (exit 1) for an unknown organization', async () => {
    const r = await importFile(goodFile, 'org_000000000000000000000000');
    expect(r.code).toBe(1);
    expect(r.json).toMatchObject({ ok: false, error: 'not_found', message: expect.stringContaining('org_000000000000000000000000') });
  }, 60_000);

  it('a bad file or command line exits 2 with a JSON error, before touching the store', async () => {
    const fresh = join(dir, 'never-opened');
    const run = (...args: string[]) => runCli({ DATA_DIR: fresh, DATABASE_URL: databaseUrl }, args);
    const expect2 = (r: CliRun, error: string, message: RegExp) => {
      expect(r.code).toBe(2);
      expectOneJsonLine(r);
      expect(r.json).toMatchObject({ ok: false, error, message: expect.stringMatching(message) });
    };
    expect2(await run('certificates', 'import-legacy', join(dir, 'missing.json'), '--org', orgId), 'invalid_legacy_file', /cannot read .*missing\.json/);
    expect2(await run('certificates', 'import-legacy', file('{"schema_version": "cert.v2",'), '--org', orgId), 'invalid_legacy_file', /not JSON/);
    expect2(await run('certificates', 'import-legacy', file([]), '--org', orgId), 'invalid_legacy_file', /no certificate/);
    const malformed: LegacyManifestFile = { ...first, payload: { ...first.payload, dataset_hash: 'md5:abc' } };
    const bad = await run('certificates', 'import-legacy', file([first, malformed]), '--org', orgId);
    expect2(bad, 'invalid_legacy_file', /certificate 1, payload\.dataset_hash/);
    expect(bad.json.details).toEqual({ problems: [{ index: 1, field: 'payload.dataset_hash', message: expect.any(String) }] });
    expect2(await run('certificates', 'import-legacy', goodFile), 'invalid_arguments', /--org is required/);
    expect2(await run('certificates', 'import-legacy', '--org', orgId), 'invalid_arguments', /missing <file>/);
    expect2(await run('certificates', 'import-legacy', goodFile, goodFile, '--org', orgId), 'invalid_arguments', /unexpected argument/);
    expect(existsSync(fresh)).toBe(false);
  }, 60_000);
});
