import { createHash, randomBytes, randomUUID } from 'node:crypto';
import * as ed from '@noble/ed25519';
import { AccessService } from '@app/access';
import { canonicalJson } from '@app/crypto';
import { CommandBus } from '@nestjs/cqrs';
import { EventStore, ProjectionHost, SqlDatabase } from '@app/event-store';
import { CertificateImported, certificateStream, ImportLegacyCertificatesCommand, LegacyImportReport, parseLegacyFile } from '@app/notary';
import { legacyManifest, LegacyManifestFile, legacySigner } from './support/legacy-certificates';
import { startTestApp, TestApp } from './support/test-app';

ed.hashes.sha512 = (m: Uint8Array) => new Uint8Array(createHash('sha512').update(m).digest());

/**
 * Imported legacy certificates (cert.v2) through every verification endpoint: they verify, with
 * is_deprecated true; a payload of any other schema version is never verified (is_supported false).
 */
describe('legacy certificates (e2e)', () => {
  let t: TestApp;
  let access: AccessService;
  beforeAll(async () => {
    t = await startTestApp({ TRUST_PROXY: 'true' });
    access = t.app.get(AccessService);
  });
  afterAll(() => t?.close());

  const ip = () => `10.${randomBytes(1)[0]}.${randomBytes(1)[0]}.${randomBytes(1)[0]}`;
  const newOrg = async () => {
    const org = await access.createOrganization(`legacy-${randomBytes(3).toString('hex')}`);
    return { orgId: org.org_id, key: (await access.createApiKey(org.org_id, { scopes: ['certificates:write'], mode: 'test' })).key };
  };
  const call = (method: 'GET' | 'POST', url: string, payload?: object, key?: string) =>
    t.app.inject({ method, url, payload, headers: { 'x-forwarded-for': ip(), ...(key ? { authorization: `Bearer ${key}` } : {}) } });
  /** What the CLI does, in this process (so this app's key ring learns the new key at once). */
  const importLegacy = async (orgId: string, manifests: LegacyManifestFile[]) => {
    const parsed = parseLegacyFile(JSON.stringify(manifests));
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
    return t.app.get(CommandBus).execute<ImportLegacyCertificatesCommand, LegacyImportReport>(new ImportLegacyCertificatesCommand(orgId, parsed.certificates));
  };
  const signer = legacySigner();

  it('serves an imported cert.v2 certificate exactly as signed, and every verification endpoint verifies it as deprecated', async () => {
    const { orgId, key } = await newOrg();
    const m = legacyManifest(signer, { filename: 'legacy-survey.csv', artifact_type: 'dataset' });
    const report = await importLegacy(orgId, [m]);
    expect(report).toMatchObject({ imported: 1, keys_registered: [{ key_id: signer.keyId, status: 'retired' }] });
    const id = m.payload.certification_id;

    const cert = await call('GET', `/api/certificates/${id}`);
    expect(cert.statusCode).toBe(200);
    expect(cert.json()).toEqual({ ...m.payload, signature: `ed25519:${m.signature.value}` });
    const signed = await call('GET', `/api/certificates/${id}/signed-payload`);
    expect(signed.headers['content-type']).toMatch(/^application\/json/);
    expect(signed.json()).toEqual({ schema_version: 'cert.v2', payload: m.payload, signature: m.signature });
    const download = await call('GET', `/api/certificates/${id}/download`);
    expect(download.headers['content-type']).toMatch(/^application\/service\.manifest\+json/);
    expect(download.headers['content-disposition']).toBe(`attachment; filename="certificate-${id}.json"`);
    expect(JSON.parse(download.body)).toEqual(signed.json());
    expect((await call('GET', `/api/cert/${id}/manifest`)).json()).toEqual(signed.json());

    const deprecated = { schema_version: 'cert.v2', is_supported: true, is_deprecated: true };
    expect((await call('POST', '/api/verify', { certificate_id: id })).json()).toEqual({
      verified: true,
      status: 'ISSUED',
      certificate_id: id,
      ...deprecated,
      issuer: 'legacy.example.org',
      issued_at: m.payload.timestamp,
      signature_alg: 'Ed25519',
      artifact_hash_match: null,
      reason: null,
      key_id: signer.keyId,
    });
    expect((await call('POST', '/api/verify', { certificate_id: id, artifact_hash: m.payload.dataset_hash })).json()).toMatchObject({ verified: true, artifact_hash_match: true, ...deprecated });
    expect((await call('POST', '/api/verify/hash', { cert_id: id, sha256: m.payload.dataset_hash.slice(7) })).json()).toEqual({
      verified: true,
      hash_matched: true,
      signature_valid: true,
      ...deprecated,
      issuer: 'legacy.example.org',
      timestamp: m.payload.timestamp,
      error: null,
    });
    const byHash = (await call('POST', '/api/verify/hash', { hash: m.payload.dataset_hash })).json();
    expect(byHash).toMatchObject({ verified: true, certificate_id: id, ...deprecated });
    expect(byHash.certificates).toEqual([expect.objectContaining({ certificate_id: id, verified: true, ...deprecated })]);
    const recomputed = (await call('GET', `/api/verify/${id}`)).json();
    expect(recomputed).toMatchObject({ verified: true, ...deprecated, checks: { signature: 'valid', canonical_payload_hash: `sha256:${createHash('sha256').update(canonicalJson(m.payload)).digest('hex')}` } });

    // Offline, with only the published keys document: the legacy key is there, retired.
    const keys = (await call('GET', '/.well-known/signing-keys.json')).json();
    const legacyKey = keys.keys.find((k: { key_id: string }) => k.key_id === signer.keyId);
    expect(legacyKey).toMatchObject({ public_key: signer.publicKey, status: 'retired', algorithm: 'Ed25519' });
    expect(keys.keys.filter((k: { status: string }) => k.status === 'active')).toHaveLength(1);
    const message = new TextEncoder().encode(createHash('sha256').update(canonicalJson(signed.json().payload)).digest('hex'));
    expect(ed.verify(Buffer.from(m.signature.value, 'base64url'), message, Buffer.from(legacyKey.public_key, 'base64url'), { zip215: false })).toBe(true);

    // The registry lists it like an issued certificate: privately, until its owner publishes it.
    await t.app.get(ProjectionHost).catchUp();
    expect((await call('GET', '/v1/registry?visibility=private', undefined, key)).json().items).toEqual([
      expect.objectContaining({ id, certificateId: id, title: 'legacy-survey.csv', status: 'certified', artifactType: 'dataset', rowsCount: 12, artifactHash: m.payload.dataset_hash }),
    ]);
    const published = await t.app.inject({ method: 'PATCH', url: `/v1/registry/${id}`, payload: { visibility: 'public' }, headers: { authorization: `Bearer ${key}`, 'x-forwarded-for': ip() } });
    expect(published.statusCode).toBe(200);
    const other = await newOrg();
    const foreign = await t.app.inject({ method: 'PATCH', url: `/v1/registry/${id}`, payload: { visibility: 'private' }, headers: { authorization: `Bearer ${other.key}`, 'x-forwarded-for': ip() } });
    expect(foreign.statusCode).toBe(404);
  });

  it('still refuses an imported certificate whose stored payload was altered', async () => {
    const { orgId } = await newOrg();
    const m = legacyManifest(signer, {}, { withPublicKey: false });
    await importLegacy(orgId, [m]);
    const id = m.payload.certification_id;
    await t.app.get(SqlDatabase).query(`UPDATE certificates SET payload = (payload::jsonb || '{"rows": 999}')::json WHERE certificate_id = $1`, [id]);
    expect((await call('POST', '/api/verify', { certificate_id: id })).json()).toMatchObject({ verified: false, reason: 'signature_invalid', is_deprecated: true });
    expect((await call('POST', '/api/verify/hash', { cert_id: id, sha256: m.payload.dataset_hash })).json()).toMatchObject({ verified: false, signature_valid: false, is_deprecated: true, error: 'signature_invalid' });
  });

  it('never verifies a certificate of an unknown schema version, even validly signed: is_supported false on every endpoint', async () => {
    const { orgId } = await newOrg();
    // The import refuses cert.v9, so it is put in the store directly, as an import would record it.
    const m = legacyManifest(signer, { schema_version: 'cert.v9' }, { withPublicKey: false });
    const id = m.payload.certification_id;
    const data: CertificateImported = { org_id: orgId, manifest: { schema_version: m.schema_version, payload: m.payload, signature: m.signature } };
    // The certificates projection writes its row with the append.
    await t.app.get(EventStore).append(certificateStream(id), [{ type: 'certificate.imported', data }], { expectedRevision: 'no_stream' });

    expect((await call('GET', `/api/certificates/${id}`)).json()).toMatchObject({ schema_version: 'cert.v9', certification_id: id });
    expect((await call('GET', `/api/certificates/${id}/signed-payload`)).json()).toMatchObject({ schema_version: 'cert.v9', payload: m.payload });
    const unsupported = { schema_version: 'cert.v9', is_supported: false, is_deprecated: false };
    expect((await call('POST', '/api/verify', { certificate_id: id, artifact_hash: m.payload.dataset_hash })).json()).toMatchObject({
      verified: false,
      ...unsupported,
      reason: 'unsupported_schema_version',
    });
    expect((await call('POST', '/api/verify/hash', { cert_id: id, sha256: m.payload.dataset_hash })).json()).toEqual({
      verified: false,
      hash_matched: true,
      signature_valid: false,
      ...unsupported,
      issuer: 'legacy.example.org',
      timestamp: m.payload.timestamp,
      error: 'unsupported_schema_version',
    });
    const byHash = (await call('POST', '/api/verify/hash', { hash: m.payload.dataset_hash })).json();
    expect(byHash).toMatchObject({ verified: false, certificate_id: id, ...unsupported, error: 'unsupported_schema_version' });
    expect((await call('GET', `/api/verify/${id}`)).json()).toMatchObject({ verified: false, ...unsupported, reason: 'unsupported_schema_version' });
  });

  it('an issued certificate reports its current schema: supported, not deprecated', async () => {
    const { key } = await newOrg();
    const { certificate_id } = (await call('POST', '/api/notary/create', { content: 'current' }, key)).json();
    const current = { schema_version: 'service.cert.v1', is_supported: true, is_deprecated: false };
    expect((await call('POST', '/api/verify', { certificate_id })).json()).toMatchObject({ verified: true, ...current });
    expect((await call('GET', `/api/verify/${certificate_id}`)).json()).toMatchObject({ verified: true, ...current });
    expect((await call('POST', '/api/verify', { certificate_id: randomUUID() })).json()).toMatchObject({ verified: false, status: 'NOT_FOUND', schema_version: null, is_supported: false });
  });

  it('imported certificates do not count against the free issuance quota', async () => {
    const { orgId, key } = await newOrg();
    const report = await importLegacy(orgId, [1, 2, 3, 4].map(() => legacyManifest(signer, {}, { withPublicKey: false })));
    expect(report.imported).toBe(4);
    for (let i = 0; i < 3; i++) expect((await call('POST', '/api/notary/create', { content: `free ${i}` }, key)).statusCode).toBe(200);
    const fourth = await call('POST', '/api/notary/create', { content: 'one too many' }, key);
    expect(fourth.statusCode).toBe(402);
    expect(fourth.json()).toMatchObject({ error: 'notary_paywall' });
  });
});
