import { randomBytes } from 'node:crypto';
import { openTestStore } from '../../../../test/support/test-store';
import { creditMigrations } from '../credits/credits.migrations';
import { signingKeyMigrations } from '../signing-keys/signing-keys.migrations';
import { SigningKeyStore } from '../signing-keys/signing-key.store';
import { SigningKeyRepository } from '../signing-keys/signing-key.repository';
import { certificateMigrations } from './certificates.migrations';
import { CertificateService } from './certificate.service';
import { CertificateReadModel } from './certificate-read-model.repository';
import { certificatesProjection } from './certificate.projection';
import { issuerOn } from './certificate-test-issuer';

const until = async (check: () => Promise<boolean>, ms = 5000) => {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
};

describe('CertificateService verification (on the real store)', () => {
  let t: Awaited<ReturnType<typeof openTestStore>>;
  const kek = randomBytes(32);
  const keyStores: SigningKeyStore[] = [];
  const startProcess = async () => {
    const keys = new SigningKeyStore(SigningKeyRepository.on(t.db, t.store), kek);
    keyStores.push(keys);
    await keys.start();
    const sut = Object.assign(new CertificateService(new CertificateReadModel(t.db), keys), { issue: issuerOn(t.store, keys) });
    return { keys, sut };
  };
  beforeEach(async () => {
    t = await openTestStore([...signingKeyMigrations, ...certificateMigrations, ...creditMigrations], [certificatesProjection]);
  });
  afterEach(async () => {
    for (const k of keyStores.splice(0)) await k.stop();
    await t?.dispose();
  });

  it('applies the signing key status as it is now, also to a certificate verified before', async () => {
    const a = await startProcess();
    const b = await startProcess(); // another process on the same database
    const m = await a.sut.issue('org_a', { content: 'status changes' });
    const id = m.payload.certification_id;
    expect(await a.sut.verify(id)).toMatchObject({ verified: true, reason: null });

    await b.keys.rotate();
    await b.keys.revoke(m.signature.key_id);
    // Process a learns of the change from the database's notification and reloads its ring.
    await until(async () => a.keys.current.get(m.signature.key_id)?.status === 'revoked');
    expect(await a.sut.verify(id)).toMatchObject({ verified: true, reason: 'signed_by_revoked_key_before_revocation' });
    expect(await b.sut.verify(id)).toMatchObject({ verified: true, reason: 'signed_by_revoked_key_before_revocation' });
  });

  it('reads the record on every request: one altered after a verification fails the next one', async () => {
    const { sut } = await startProcess();
    const m = await sut.issue('org_a', { content: 'tamper' });
    const id = m.payload.certification_id;
    expect(await sut.verify(id)).toMatchObject({ verified: true });
    await t.db.query(`UPDATE certificates SET payload = (payload::jsonb || '{"rows": 999}')::json WHERE certificate_id = $1`, [id]);
    expect(await sut.verify(id)).toMatchObject({ verified: false, reason: 'signature_invalid' });
    expect((await sut.manifest(id))?.payload.rows).toBe(999);
    await t.db.query(`UPDATE certificates SET payload = $2::json WHERE certificate_id = $1`, [id, JSON.stringify(m.payload)]);
    expect(await sut.verify(id)).toMatchObject({ verified: true });
  });

  it('answers concurrent verifications of many certificates, found or not, each with its own verdict', async () => {
    const { sut } = await startProcess();
    const issued = [await sut.issue('org_a', { content: 'one' }), await sut.issue('org_a', { content: 'two' })];
    const missing = '00000000-0000-4000-8000-000000000000';
    const ids = [issued[0].payload.certification_id, missing, issued[1].payload.certification_id, issued[0].payload.certification_id];
    const results = await Promise.all(ids.map((id) => sut.verify(id)));
    expect(results.map((r) => [r.certificate_id, r.status, r.verified])).toEqual([
      [ids[0], 'ISSUED', true],
      [missing, 'NOT_FOUND', false],
      [ids[2], 'ISSUED', true],
      [ids[0], 'ISSUED', true],
    ]);
  });

  it('finds a certificate by its id in upper case too (a uuid is case-insensitive)', async () => {
    const { sut } = await startProcess();
    const m = await sut.issue('org_a', { content: 'upper' });
    const upper = m.payload.certification_id.toUpperCase();
    expect(await sut.verify(upper, m.payload.dataset_hash)).toMatchObject({ verified: true, status: 'ISSUED', certificate_id: m.payload.certification_id, artifact_hash_match: true });
    expect(await sut.manifest(upper)).toEqual(m);
    expect(await sut.verifyHash(upper, m.payload.dataset_hash)).toMatchObject({ verified: true, error: null });
    expect((await sut.verificationReport(upper))?.report).toMatchObject({ verified: true });
  });

  it('refuses a record holding another certificate\'s genuine payload and signature (it certifies that one, not this)', async () => {
    const { sut } = await startProcess();
    const a = await sut.issue('org_a', { content: 'artifact a' });
    const b = await sut.issue('org_a', { content: 'artifact b' });
    const id = a.payload.certification_id;
    await t.db.query('UPDATE certificates SET payload = $2::json, signature = $3, key_id = $4 WHERE certificate_id = $1', [id, JSON.stringify(b.payload), b.signature.value, b.signature.key_id]);
    expect(await sut.verify(id, b.payload.dataset_hash)).toMatchObject({ verified: false, certificate_id: id, reason: 'certificate_id_mismatch' });
    expect(await sut.verifyHash(id, b.payload.dataset_hash)).toMatchObject({ verified: false, signature_valid: false, error: 'certificate_id_mismatch' });
    expect(await sut.verify(b.payload.certification_id)).toMatchObject({ verified: true });
  });
});
