import { generateKeyPairSync, randomBytes, sign, verify } from 'node:crypto';
import { DomainError, fixedClock } from '@app/core';
import { canonicalJson, sha256Hex } from '@app/crypto';
import { InMemoryEventStore } from '@app/event-store';
import { CertificateRepository } from '../certificates/certificate.repository';
import { certificatesProjection } from '../certificates/certificate.projection';
import { certificateStream, FREE_ISSUANCES } from '../domain/certificate.aggregate';
import { IssueCertificateCommand } from './issue-certificate.command';
import { MAX_SIGNING_ATTEMPTS } from '@app/core';
import { IssueCertificateHandler } from './issue-certificate.handler';
import { InMemorySigningKeySecrets, SigningKeyRepository } from '../signing-keys/signing-key.repository';
import { SigningKeyStore } from '../signing-keys/signing-key.store';

const keys = generateKeyPairSync('ed25519');
const authority = { issuer: 'sigil.test', sign: (message: Buffer) => ({ key_id: 'key-1', signature: sign(null, message, keys.privateKey) }), refresh: async () => undefined };

describe('IssueCertificateHandler (aggregate + repository on the in-memory store)', () => {
  let store: InMemoryEventStore;
  let sut: IssueCertificateHandler;
  const clock = fixedClock('2026-11-25T10:00:00.000Z');
  beforeEach(() => {
    store = new InMemoryEventStore(() => clock.now());
    store.registerProjection(certificatesProjection);
    sut = new IssueCertificateHandler(new CertificateRepository(store), authority, clock);
  });

  it('records CertificateIssued on the certificate stream, signed over the JCS hash of the payload, and writes its row', async () => {
    const m = await sut.execute(new IssueCertificateCommand('org_a', '{"b": 2, "a": [1, 2]}', { filename: 'data.json', artifact_type: 'dataset' }));
    expect(m.payload).toMatchObject({
      schema_version: 'service.cert.v1',
      issuer: 'sigil.test',
      timestamp: '2026-11-25T10:00:00.000Z',
      dataset_hash: `sha256:${sha256Hex('{"a":[1,2],"b":2}')}`,
      algorithm: 'jcs-sha256',
      filename: 'data.json',
      artifact_type: 'dataset',
    });
    const message = Buffer.from(sha256Hex(canonicalJson(m.payload)), 'ascii');
    expect(verify(null, message, keys.publicKey, Buffer.from(m.signature.value, 'base64url'))).toBe(true);
    const events = await store.readStream(certificateStream(m.payload.certification_id));
    expect(events.map((e) => [e.type, e.data])).toEqual([['certificate.issued', JSON.parse(canonicalJson({ org_id: 'org_a', manifest: m }))]]);
    expect(store.rows('certificates')).toEqual([expect.objectContaining({ certificate_id: m.payload.certification_id, org_id: 'org_a', imported: false })]);
  });

  it(`refuses the issuance after ${FREE_ISSUANCES} free ones with notary_paywall, and records nothing of it`, async () => {
    for (let i = 0; i < FREE_ISSUANCES; i++) await sut.execute(new IssueCertificateCommand('org_p', `free ${i}`));
    const refused = sut.execute(new IssueCertificateCommand('org_p', 'one too many'));
    await expect(refused).rejects.toBeInstanceOf(DomainError);
    await expect(sut.execute(new IssueCertificateCommand('org_p', 'again'))).rejects.toMatchObject({ code: 'notary_paywall' });
    expect(store.rows('certificates')).toHaveLength(FREE_ISSUANCES);
    expect((await store.readAll()).events).toHaveLength(FREE_ISSUANCES);
    // Another organization has its own quota.
    await expect(sut.execute(new IssueCertificateCommand('org_q', 'mine'))).resolves.toBeDefined();
  });

  it('keeps a prediction manifest’s hashes for inclusion proofs, and refuses one whose manifest_hash is not their Merkle root', async () => {
    const bad = JSON.stringify({ artifact_schema: 'prediction_manifest.v1', manifest_hash: `sha256:${'0'.repeat(64)}`, prediction_hashes: [`sha256:${'1'.repeat(64)}`] });
    await expect(sut.execute(new IssueCertificateCommand('org_a', bad))).rejects.toMatchObject({ code: 'invalid_prediction_manifest' });
    expect(store.rows('prediction_manifests')).toEqual([]);
  });

  it('signs again after a refusal for a revoked key, and answers concurrent_modification when the key it reloads is revoked each time', async () => {
    const ringStore = new InMemoryEventStore(() => clock.now());
    ringStore.registerProjection(certificatesProjection);
    const ring = new SigningKeyStore(new SigningKeyRepository(ringStore, new InMemorySigningKeySecrets()), randomBytes(32));
    await ring.start();
    // Signing with a ring that never hears of the revocation: every attempt is refused, and nothing is recorded.
    let refreshed = 0;
    const stale = ring.current;
    await ring.revoke(stale.active().key_id);
    const handler = new IssueCertificateHandler(new CertificateRepository(ringStore), { issuer: 'sigil.test', sign: (m) => stale.sign(m), refresh: async () => void refreshed++ }, clock);
    const refused = handler.execute(new IssueCertificateCommand('org_a', 'never under a revoked key'));
    await expect(refused).rejects.toBeInstanceOf(DomainError);
    await expect(handler.execute(new IssueCertificateCommand('org_a', 'again'))).rejects.toMatchObject({ code: 'concurrent_modification' });
    expect(refreshed).toBe(2 * (MAX_SIGNING_ATTEMPTS - 1));
    expect(ringStore.rows('certificates')).toEqual([]);
    // The process's own ring follows the revocation: issuance signs with the new key.
    const fresh = new IssueCertificateHandler(new CertificateRepository(ringStore), { issuer: 'sigil.test', sign: (m) => ring.current.sign(m), refresh: async () => void (await ring.refresh()) }, clock);
    const m = await fresh.execute(new IssueCertificateCommand('org_a', 'under the new key'));
    expect(m.signature.key_id).toBe(ring.current.active().key_id);
    expect(ringStore.rows('certificates')).toHaveLength(1);
  });

  it('refuses content that is not valid Unicode or too long, before signing anything', async () => {
    await expect(sut.execute(new IssueCertificateCommand('org_a', 'lone \ud800 surrogate'))).rejects.toMatchObject({ code: 'invalid_content' });
    await expect(sut.execute(new IssueCertificateCommand('org_a', 'x'.repeat(5_000_001)))).rejects.toMatchObject({ code: 'content_too_large' });
    expect((await store.readAll()).events).toEqual([]);
  });
});
