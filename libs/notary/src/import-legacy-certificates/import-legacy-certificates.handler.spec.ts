import { randomBytes } from 'node:crypto';
import { AppError } from '@app/core';
import { InMemoryEventStore } from '@app/event-store';
import { legacyManifest, legacySignature, legacySigner } from '../../../../test/support/legacy-certificates';
import { CertificateRepository } from '../certificates/certificate.repository';
import { certificatesProjection } from '../certificates/certificate.projection';
import { CERTIFICATE_IMPORTED, certificateStream } from '../domain/certificate.aggregate';
import { LegacyCertificate, parseLegacyFile } from '../domain/legacy-certificate';
import { SIGNING_KEY_CREATED, SIGNING_KEY_IMPORTED, SIGNING_KEYS_STREAM } from '../domain/signing-key-ring.aggregate';
import { InMemorySigningKeySecrets, SigningKeyRepository } from '../signing-keys/signing-key.repository';
import { SigningKeyStore } from '../signing-keys/signing-key.store';
import { ImportLegacyCertificatesCommand } from './import-legacy-certificates.command';
import { ImportLegacyCertificatesHandler } from './import-legacy-certificates.handler';

const parse = (value: unknown): LegacyCertificate[] => {
  const parsed = parseLegacyFile(JSON.stringify(value));
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  return parsed.certificates;
};

describe('ImportLegacyCertificatesHandler (on the in-memory store)', () => {
  const kek = randomBytes(32);
  const ORG = 'org_legacy';
  let store: InMemoryEventStore;
  let secrets: InMemorySigningKeySecrets;
  let ring: SigningKeyStore;
  let sut: ImportLegacyCertificatesHandler;
  beforeEach(async () => {
    store = new InMemoryEventStore();
    store.registerProjection(certificatesProjection);
    secrets = new InMemorySigningKeySecrets();
    const keys = new SigningKeyRepository(store, secrets);
    ring = new SigningKeyStore(keys, kek);
    await ring.start();
    sut = new ImportLegacyCertificatesHandler(keys, new CertificateRepository(store), store, kek);
  });
  const signer = legacySigner();

  it('registers the legacy key as verify-only and imports each certificate on its own stream, in one write; this ring knows the key at once', async () => {
    const a = legacyManifest(signer, { timestamp: '2023-11-05T08:30:00+01:00' });
    const b = legacyManifest(signer, {}, { withPublicKey: false });
    const at = new Date('2025-06-01T00:00:00.000Z');
    const appendMany = jest.spyOn(store, 'appendMany');
    const append = jest.spyOn(store, 'append');
    const report = await sut.execute(new ImportLegacyCertificatesCommand(ORG, parse([a, b]), at));
    expect(report).toEqual({
      org_id: ORG,
      imported: 2,
      already_imported: 0,
      keys_registered: [
        { key_id: signer.keyId, algorithm: 'Ed25519', public_key: signer.publicKey, created_at: '2023-11-05T07:30:00.000Z', status: 'retired', retired_at: at.toISOString(), revoked_at: null },
      ],
      certificates: [
        { certificate_id: a.payload.certification_id, key_id: signer.keyId, status: 'imported' },
        { certificate_id: b.payload.certification_id, key_id: signer.keyId, status: 'imported' },
      ],
    });
    expect(ring.current.get(signer.keyId)).toMatchObject({ status: 'retired', public_key: signer.publicKey });
    expect(ring.current.list().filter((k) => k.status === 'active')).toHaveLength(1);
    const keyEvents = await store.readStream(SIGNING_KEYS_STREAM);
    expect(keyEvents.map((e) => e.type)).toEqual([SIGNING_KEY_CREATED, SIGNING_KEY_IMPORTED]);
    expect(keyEvents[1].data).toEqual({ ...report.keys_registered[0], revoked_at: undefined, verify_only: true });
    expect(secrets.sealed.has(signer.keyId)).toBe(false);
    expect(store.rows('signing_keys').find((r) => r.key_id === signer.keyId)).toMatchObject({ status: 'retired' });
    // The key and both certificates were written together, in one appendMany and nothing else.
    expect(appendMany).toHaveBeenCalledTimes(1);
    expect(appendMany.mock.calls[0][0].map((x) => [x.stream, x.expected])).toEqual([
      [SIGNING_KEYS_STREAM, 'any'],
      [certificateStream(a.payload.certification_id), 'no_stream'],
      [certificateStream(b.payload.certification_id), 'no_stream'],
    ]);
    expect(append).not.toHaveBeenCalled();
    const all = (await store.readAll()).events.slice(1);
    expect(all.map((e) => e.type)).toEqual([SIGNING_KEY_IMPORTED, CERTIFICATE_IMPORTED, CERTIFICATE_IMPORTED]);
    const stream = await store.readStream(certificateStream(a.payload.certification_id));
    expect(stream.map((e) => [e.type, e.data])).toEqual([[CERTIFICATE_IMPORTED, { org_id: ORG, manifest: { schema_version: 'cert.v2', payload: a.payload, signature: a.signature } }]]);
    expect(store.rows('certificates').map((r) => r.imported)).toEqual([true, true]);
  });

  it('importing the same file again imports nothing new; a concurrent identical write is a replay', async () => {
    const file = parse([legacyManifest(signer)]);
    await sut.execute(new ImportLegacyCertificatesCommand(ORG, file));
    const before = (await store.readAll()).events.length;
    const again = await sut.execute(new ImportLegacyCertificatesCommand(ORG, file));
    expect(again).toMatchObject({ imported: 0, already_imported: 1, keys_registered: [], certificates: [{ status: 'already_imported' }] });
    expect((await store.readAll()).events).toHaveLength(before);
  });

  it('refuses the whole file with legacy_import_refused when one certificate fails, and writes nothing', async () => {
    const fresh = legacySigner();
    const fine = legacyManifest(fresh);
    const forged = legacyManifest(fresh);
    forged.signature.value = legacySignature(legacySigner(), forged.payload);
    const refused = sut.execute(new ImportLegacyCertificatesCommand(ORG, parse([fine, forged])));
    await expect(refused).rejects.toBeInstanceOf(AppError);
    await expect(sut.execute(new ImportLegacyCertificatesCommand(ORG, parse([fine, forged])))).rejects.toMatchObject({
      code: 'legacy_import_refused',
      status: 422,
      message: expect.stringMatching(/^nothing was imported: 1 certificate\(s\) refused; the first, at index 1 .*signature_invalid/),
      details: { refused: [{ index: 1, certificate_id: forged.payload.certification_id, key_id: fresh.keyId, reason: 'signature_invalid', message: expect.any(String) }] },
    });
    expect((await store.readAll()).events.map((e) => e.type)).toEqual([SIGNING_KEY_CREATED]);
    expect(ring.current.get(fresh.keyId)).toBeUndefined();
  });

  it('refuses a certificate id already stored with other content or in another organization', async () => {
    const first = legacyManifest(signer);
    await sut.execute(new ImportLegacyCertificatesCommand(ORG, parse([first])));
    const changed = legacyManifest(signer, { certification_id: first.payload.certification_id, rows: 999 }, { withPublicKey: false });
    await expect(sut.execute(new ImportLegacyCertificatesCommand(ORG, parse([changed])))).rejects.toMatchObject({ code: 'legacy_import_refused', details: { refused: [{ reason: 'certificate_conflict' }] } });
    await expect(sut.execute(new ImportLegacyCertificatesCommand('org_other', parse([first])))).rejects.toMatchObject({ details: { refused: [{ reason: 'certificate_conflict' }] } });
    expect(await store.readStream(certificateStream(first.payload.certification_id))).toHaveLength(1);
  });

  it('writes nothing when another organization imports one of its certificates between the plan and the write: the keys and the other certificates stay out too', async () => {
    const racer = legacySigner();
    const [a, b] = [legacyManifest(racer), legacyManifest(racer)];
    const appendMany = store.appendMany.bind(store);
    let raced = false;
    jest.spyOn(store, 'appendMany').mockImplementation(async (appends, options) => {
      if (!raced) {
        raced = true;
        // The other import lands first, on b's stream.
        await store.append(certificateStream(b.payload.certification_id), [{ type: CERTIFICATE_IMPORTED, data: { org_id: 'org_other', manifest: b } }], { expectedRevision: 'no_stream' });
      }
      return appendMany(appends, options);
    });
    await expect(sut.execute(new ImportLegacyCertificatesCommand(ORG, parse([a, b])))).rejects.toMatchObject({
      code: 'legacy_import_refused',
      message: expect.stringMatching(/^nothing was imported/),
      details: { refused: [{ certificate_id: b.payload.certification_id, reason: 'certificate_conflict' }] },
    });
    expect(await store.readStream(certificateStream(a.payload.certification_id))).toEqual([]);
    expect((await store.readStream(SIGNING_KEYS_STREAM)).map((e) => e.type)).not.toContain(SIGNING_KEY_IMPORTED);
  });
});
