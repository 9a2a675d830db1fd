import { randomBytes } from 'node:crypto';
import * as ed from '@noble/ed25519';
import { createHash } from 'node:crypto';
import { AccessService } from '@app/access';
import { canonicalJson } from '@app/crypto';
import { SqlDatabase } from '@app/event-store';
import { manifestRoot, SigningKeyStore, verifyPredictionProof } from '@app/notary';
import { isolatedEnv } from './support/isolated-env';
import { startTestApp, TestApp } from './support/test-app';

ed.hashes.sha512 = (m: Uint8Array) => new Uint8Array(createHash('sha512').update(m).digest());

/** Certificate issuance, retrieval and verification over HTTP (issue 4, first part). */
describe('notary (e2e)', () => {
  let t: TestApp;
  let access: AccessService;
  let stopped = false;
  let iso: Awaited<ReturnType<typeof isolatedEnv>> | undefined;
  beforeAll(async () => {
    // Its own schema in the PostgreSQL pass: it rotates the signing key, which would change the key status other suites' answers name.
    iso = await isolatedEnv();
    t = await startTestApp({ ...iso.env, TRUST_PROXY: 'true' });
    access = t.app.get(AccessService);
  });
  afterAll(async () => {
    if (!stopped) await t?.close();
    await iso?.dispose();
  });

  const ip = () => `10.${randomBytes(1)[0]}.${randomBytes(1)[0]}.${randomBytes(1)[0]}`;
  const keyFor = async (scopes: Parameters<AccessService['createApiKey']>[1]['scopes'] = ['certificates:write']) => {
    const org = await access.createOrganization(`notary-${randomBytes(3).toString('hex')}`);
    return (await access.createApiKey(org.org_id, { scopes, mode: 'test' })).key;
  };
  const issue = (key: string | null, payload: unknown) =>
    t.app.inject({
      method: 'POST',
      url: '/api/notary/create',
      headers: { 'x-forwarded-for': ip(), ...(key ? { authorization: `Bearer ${key}` } : {}) },
      payload: payload as object,
    });
  const get = (url: string, headers: Record<string, string> = {}) => t.app.inject({ method: 'GET', url, headers: { 'x-forwarded-for': ip(), ...headers } });

  it('issues a certificate in the spec shape; pretty and compact JSON get the same hash', async () => {
    const key = await keyFor();
    const data = [{ id: 1, label: 'cat' }, { id: 2, label: 'dog', extra: true }];
    const compact = await issue(key, { content: JSON.stringify(data), type: 'text', filename: 'labels.json' });
    const pretty = await issue(key, { content: JSON.stringify(data, null, 4) });
    expect(compact.statusCode).toBe(200);
    const body = compact.json();
    expect(body).toMatchObject({
      certificate_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      certificate_type: 'GENESIS',
      schema_version: 'cert.v1',
      signature_alg: 'Ed25519',
      signing_key_id: expect.any(String),
      signature: expect.stringMatching(/^ed25519:[A-Za-z0-9_-]{86}$/),
      verify_url: `${t.config.BASE_URL}/verify/${body.certificate_id}`,
    });
    expect(new Date(body.issued_at).toISOString()).toBe(body.issued_at);
    expect(pretty.json().dataset_hash).toBe(body.dataset_hash);
    const expected = 'sha256:' + createHash('sha256').update(canonicalJson(data)).digest('hex');
    expect(body.dataset_hash).toBe(expected);

    const cert = (await get(`/api/certificates/${body.certificate_id}`)).json();
    expect(cert).toMatchObject({ schema_version: 'service.cert.v1', certification_id: body.certificate_id, dataset_hash: expected, rows: 2, columns: 3, signature: body.signature });
  });

  it('answers 401, 403, 400 content_required, 413 content_too_large and 402 notary_paywall', async () => {
    expect((await issue(null, { content: 'x' })).json()).toMatchObject({ error: 'auth_required' });
    const readOnly = await keyFor(['payments:read']);
    const denied = await issue(readOnly, { content: 'x' });
    expect(denied.statusCode).toBe(403);
    expect(denied.json()).toMatchObject({ error: 'insufficient_scope' });

    const key = await keyFor();
    for (const bad of [{}, { filename: 'a.txt' }, { content: undefined }]) {
      const res = await issue(key, bad);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ ok: false, error: 'content_required' });
    }
    const wrongType = await issue(key, { content: 42 });
    expect(wrongType.statusCode).toBe(400);
    expect(wrongType.json()).toMatchObject({ error: 'validation_failed', details: [{ field: 'content' }] });
    // Exactly at the limit, in 3-byte characters (15 MB of body), is accepted.
    const atLimit = await issue(await keyFor(), { content: '€'.repeat(5_000_000) });
    expect(atLimit.statusCode).toBe(200);
    const big = await issue(key, { content: 'a'.repeat(5_000_001) });
    expect(big.statusCode).toBe(413);
    expect(big.json()).toMatchObject({ ok: false, error: 'content_too_large' });
    const lone = await t.app.inject({
      method: 'POST',
      url: '/api/notary/create',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-forwarded-for': ip() },
      payload: '{"content":"\\ud800"}',
    });
    expect(lone.statusCode).toBe(400);
    expect(lone.json()).toMatchObject({ error: 'invalid_content' });
    // U+0000 in a field stored in the payload is refused by name (PostgreSQL's JSON holds none); in content it is fine.
    for (const field of ['filename', 'type']) {
      const nul = await issue(key, { content: 'x', [field]: 'a\u0000b' });
      expect(nul.statusCode).toBe(400);
      expect(nul.json()).toMatchObject({ error: 'validation_failed', details: [expect.objectContaining({ field })] });
    }

    for (let i = 0; i < 3; i++) expect((await issue(key, { content: `free ${i}` })).statusCode).toBe(200);
    const fourth = await issue(key, { content: 'one too many' });
    expect(fourth.statusCode).toBe(402);
    expect(fourth.json()).toMatchObject({ ok: false, error: 'notary_paywall' });
    // The quota is per organization: another organization still issues.
    expect((await issue(await keyFor(), { content: 'other org' })).statusCode).toBe(200);
  });

  it('serves the signed payload as JSON, the download as an attachment, and 404/400 for unknown/malformed ids', async () => {
    const { certificate_id } = (await issue(await keyFor(), { content: 'hello,world\n1,2\n' })).json();
    const signed = await get(`/api/certificates/${certificate_id}/signed-payload`);
    expect(signed.statusCode).toBe(200);
    expect(signed.headers['content-type']).toMatch(/^application\/json/);
    expect(signed.headers['content-disposition']).toBeUndefined();
    expect(signed.json()).toMatchObject({ schema_version: 'service.manifest.v1', payload: { certification_id: certificate_id, rows: 1, columns: 2, algorithm: 'sha256' }, signature: { alg: 'Ed25519' } });

    const download = await get(`/api/certificates/${certificate_id}/download`);
    expect(download.headers['content-type']).toMatch(/^application\/service\.manifest\+json/);
    expect(download.headers['content-disposition']).toBe(`attachment; filename="certificate-${certificate_id}.json"`);
    expect(JSON.parse(download.body)).toEqual(signed.json());
    expect((await get(`/api/cert/${certificate_id}/manifest`)).json()).toEqual(signed.json());

    for (const path of ['', '/signed-payload', '/download']) {
      expect((await get(`/api/certificates/00000000-0000-4000-8000-000000000000${path}`)).statusCode).toBe(404);
      const malformed = await get(`/api/certificates/not-a-uuid${path}`);
      expect(malformed.statusCode).toBe(400);
      expect(malformed.json()).toMatchObject({ error: 'validation_failed' });
    }
  });

  it('verifies a certificate, with and without an artifact hash, and refuses a tampered one', async () => {
    const content = JSON.stringify({ model: 'm1', accuracy: 0.93 });
    const { certificate_id, dataset_hash } = (await issue(await keyFor(), { content })).json();
    const verify = (body: object) => t.app.inject({ method: 'POST', url: '/api/verify', payload: body, headers: { 'x-forwarded-for': ip() } });

    expect((await verify({ certificate_id })).json()).toMatchObject({ verified: true, status: 'ISSUED', certificate_id, signature_alg: 'Ed25519', artifact_hash_match: null });
    expect((await verify({ certificate_id, artifact_hash: dataset_hash })).json()).toMatchObject({ verified: true, artifact_hash_match: true });
    expect((await verify({ certificate_id, artifact_hash: dataset_hash.slice(7).toUpperCase() })).json()).toMatchObject({ artifact_hash_match: true });
    expect((await verify({ certificate_id, artifact_hash: 'sha256:' + '0'.repeat(64) })).json()).toMatchObject({ verified: false, artifact_hash_match: false, reason: 'artifact_hash_mismatch' });
    expect((await verify({ certificate_id: '00000000-0000-4000-8000-000000000000' })).json()).toMatchObject({ verified: false, status: 'NOT_FOUND' });
    for (const bad of [{}, { certificate_id: 'nope' }, { certificate_id: 7 }]) expect((await verify(bad)).statusCode).toBe(400);

    await t.app.get(SqlDatabase).query(`UPDATE certificates SET payload = (payload::jsonb || '{"rows": 999}')::json WHERE certificate_id = $1`, [certificate_id]);
    expect((await verify({ certificate_id })).json()).toMatchObject({ verified: false, reason: 'signature_invalid' });
  });

  it('checks hashes through /api/verify/hash in both body forms, and recomputes through GET /api/verify/{id}', async () => {
    const { certificate_id, dataset_hash } = (await issue(await keyFor(), { content: 'hash me' })).json();
    const post = (body: object) => t.app.inject({ method: 'POST', url: '/api/verify/hash', payload: body, headers: { 'x-forwarded-for': ip() } });

    for (const sha256 of [dataset_hash, dataset_hash.slice(7), dataset_hash.slice(7).toUpperCase()]) {
      expect((await post({ cert_id: certificate_id, sha256 })).json()).toEqual({
        verified: true,
        hash_matched: true,
        signature_valid: true,
        schema_version: 'service.cert.v1',
        is_supported: true,
        is_deprecated: false,
        issuer: expect.any(String),
        timestamp: expect.any(String),
        error: null,
      });
    }
    expect((await post({ cert_id: certificate_id, sha256: '0'.repeat(64) })).json()).toMatchObject({ verified: false, hash_matched: false, signature_valid: true, error: 'hash_mismatch' });
    expect((await post({ cert_id: '00000000-0000-4000-8000-000000000000', sha256: '0'.repeat(64) })).json()).toMatchObject({
      verified: false,
      error: 'certificate_not_found',
      schema_version: null,
      issuer: null,
    });
    // A malformed hash is reported in the 200 result, as the spec has it; the certificate is still checked.
    for (const sha256 of ['sha256:xyz', 'not a hash', '0'.repeat(63), '']) {
      const res = await post({ cert_id: certificate_id, sha256 });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ verified: false, hash_matched: false, signature_valid: true, schema_version: 'service.cert.v1', error: 'invalid_hash' });
    }
    const badAlone = await post({ hash: 'sha256:xyz' });
    expect(badAlone.statusCode).toBe(200);
    expect(badAlone.json()).toMatchObject({ verified: false, error: 'invalid_hash', schema_version: null, certificates: [] });
    const byHash = (await post({ hash: dataset_hash })).json();
    expect(byHash).toMatchObject({ verified: true, certificate_id, hash_matched: true });
    expect(byHash.certificates.map((c: { certificate_id: string }) => c.certificate_id)).toContain(certificate_id);
    expect((await post({ hash: 'sha256:' + 'f'.repeat(64) })).json()).toMatchObject({ verified: false, error: 'no_certificate_for_hash', certificates: [] });
    for (const bad of [{}, { cert_id: certificate_id }, { cert_id: 'x', sha256: dataset_hash }, { hash: 42 }, { cert_id: certificate_id, sha256: 'f'.repeat(201) }, { sha256: dataset_hash }]) {
      const res = await post(bad);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ error: 'validation_failed' });
    }

    const recomputed = await get(`/api/verify/${certificate_id}`);
    expect(recomputed.json()).toMatchObject({ verified: true, checks: { signature: 'valid', canonical_payload_hash: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) } });
    expect((await get('/api/verify/00000000-0000-4000-8000-000000000000')).statusCode).toBe(404);
    expect((await get('/api/verify/not-an-id')).statusCode).toBe(400);
  });

  it('validates prediction receipts and manifests, naming the failing field', async () => {
    const key = await keyFor();
    const receipt = {
      artifact_type: 'prediction',
      artifact_schema: 'prediction_receipt.v1',
      source: 'forecaster',
      prediction_id: 'p-1',
      predicted_at: '2026-11-01T10:00:00Z',
      context_summary: 'rain tomorrow',
    };
    expect((await issue(key, { content: JSON.stringify(receipt) })).statusCode).toBe(200);
    const missing = await issue(key, { content: JSON.stringify({ ...receipt, predicted_at: undefined }) });
    expect(missing.statusCode).toBe(400);
    expect(missing.json()).toMatchObject({ error: 'invalid_prediction_receipt', details: [{ field: 'predicted_at' }] });

    const hashes = ['a', 'b', 'c'].map((x) => 'sha256:' + createHash('sha256').update(x).digest('hex'));
    const manifest = {
      artifact_type: 'prediction_manifest',
      artifact_schema: 'prediction_manifest.v1',
      source: 'forecaster',
      period_start: '2026-11-01T00:00:00Z',
      period_end: '2026-11-02T00:00:00Z',
      prediction_hashes: hashes,
      manifest_hash: manifestRoot(hashes),
    };
    const certified = await issue(key, { content: JSON.stringify(manifest) });
    expect(certified.statusCode).toBe(200);
    const manifestId = certified.json().certificate_id;
    const proof = await get(`/api/predictions/proof?certificate_id=${manifestId}&hash=${hashes[1]}`);
    expect(proof.statusCode).toBe(200);
    expect(proof.json()).toMatchObject({ certificate_id: manifestId, manifest_hash: manifest.manifest_hash, verified: true, proof: { leaf_index: 1, tree_size: 3, root: manifest.manifest_hash } });
    // The proof checks offline against the certified manifest hash, and not against another root.
    expect(verifyPredictionProof(proof.json().proof, hashes[1], manifest.manifest_hash)).toBe(true);
    expect(verifyPredictionProof(proof.json().proof, hashes[2], manifest.manifest_hash)).toBe(false);
    const notListed = await get(`/api/predictions/proof?certificate_id=${manifestId}&hash=sha256:${'1'.repeat(64)}`);
    expect(notListed.statusCode).toBe(404);
    expect((await get(`/api/predictions/proof?certificate_id=${manifestId}&hash=nope`)).statusCode).toBe(400);
    expect((await get(`/api/predictions/proof?certificate_id=00000000-0000-4000-8000-000000000000&hash=${hashes[1]}`)).statusCode).toBe(404);
    const wrongRoot = await issue(await keyFor(), { content: JSON.stringify({ ...manifest, manifest_hash: hashes[0] }) });
    expect(wrongRoot.statusCode).toBe(400);
    expect(wrongRoot.json()).toMatchObject({ error: 'invalid_prediction_manifest', details: [{ field: 'manifest_hash' }] });
  });

  it('publishes the signing keys with an ETag; a rotated-out key still verifies what it signed', async () => {
    const first = await get('/.well-known/signing-keys.json');
    expect(first.statusCode).toBe(200);
    const etag = first.headers.etag as string;
    expect(etag).toMatch(/^"[0-9a-f]{32}"$/);
    const doc = first.json();
    expect(doc.keys.filter((k: { status: string }) => k.status === 'active')).toHaveLength(1);
    for (const k of doc.keys) {
      expect(k).toMatchObject({ key_id: expect.any(String), algorithm: 'Ed25519', public_key: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/), status: expect.any(String) });
      expect(JSON.stringify(k)).not.toMatch(/private|encrypted/);
    }
    expect((await get('/.well-known/signing-keys.json', { 'if-none-match': etag })).statusCode).toBe(304);

    const key = await keyFor();
    const before = (await issue(key, { content: 'before rotation' })).json();
    await t.app.get(SigningKeyStore).rotate();
    const after = (await issue(key, { content: 'after rotation' })).json();
    expect(after.signing_key_id).not.toBe(before.signing_key_id);
    const rotated = await get('/.well-known/signing-keys.json', { 'if-none-match': etag });
    expect(rotated.statusCode).toBe(200);
    expect(rotated.json().keys.find((k: { key_id: string }) => k.key_id === before.signing_key_id).status).toBe('retired');
    for (const id of [before.certificate_id, after.certificate_id]) {
      expect((await t.app.inject({ method: 'POST', url: '/api/verify', payload: { certificate_id: id } })).json()).toMatchObject({ verified: true });
    }
  });

  it('verifies fully offline with @noble/ed25519 once the payload and keys are fetched', async () => {
    const { certificate_id } = (await issue(await keyFor(), { content: 'offline please' })).json();
    const signed = (await get(`/api/certificates/${certificate_id}/signed-payload`)).json();
    const keys = (await get('/.well-known/signing-keys.json')).json();
    // Stop the server: from here on nothing is fetched; the check needs only what we hold.
    await t.close();
    stopped = true;
    await expect(t.app.inject({ method: 'GET', url: '/healthz' })).rejects.toThrow();

    const key = keys.keys.find((k: { key_id: string }) => k.key_id === signed.signature.key_id);
    const message = new TextEncoder().encode(createHash('sha256').update(canonicalJson(signed.payload)).digest('hex'));
    const sig = Buffer.from(signed.signature.value, 'base64url');
    expect(ed.verify(sig, message, Buffer.from(key.public_key, 'base64url'), { zip215: false })).toBe(true);
    const tampered = new TextEncoder().encode(createHash('sha256').update(canonicalJson({ ...signed.payload, rows: 1 })).digest('hex'));
    expect(ed.verify(sig, tampered, Buffer.from(key.public_key, 'base64url'), { zip215: false })).toBe(false);
  });
});
