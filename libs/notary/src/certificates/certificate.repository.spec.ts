import { randomBytes, randomUUID } from 'node:crypto';
import { DomainError } from '@app/core';
import { runMigrations } from '@app/event-store';
import { openTestStore } from '../../../../test/support/test-store';
import { creditMigrations } from '../credits/credits.migrations';
import { certificateStream, FREE_ISSUANCES } from '../domain/certificate.aggregate';
import { signingKeyMigrations } from '../signing-keys/signing-keys.migrations';
import { SigningKeyStore } from '../signing-keys/signing-key.store';
import { SigningKeyRepository } from '../signing-keys/signing-key.repository';
import { certificateMigrations } from './certificates.migrations';
import { CertificateService } from './certificate.service';
import { CertificateReadModel } from './certificate-read-model.repository';
import { certificatesProjection } from './certificate.projection';
import { issuerOn } from './certificate-test-issuer';

describe('CertificateRepository: issuance under the paywall, in groups (on the real store)', () => {
  let t: Awaited<ReturnType<typeof openTestStore>>;
  let keys: SigningKeyStore;
  const kek = randomBytes(32);
  afterEach(async () => {
    await keys?.stop();
    await t?.dispose();
  });
  const start = async (migrations = [...signingKeyMigrations, ...certificateMigrations, ...creditMigrations]) => {
    t = await openTestStore(migrations, [certificatesProjection]);
    keys = new SigningKeyStore(SigningKeyRepository.on(t.db, t.store), kek);
    await keys.start();
    return Object.assign(new CertificateService(new CertificateReadModel(t.db), keys), { issue: issuerOn(t.store, keys) });
  };
  const buy = (orgId: string, credits: number) =>
    t.db.query('INSERT INTO notary_credits (org_id, purchased) VALUES ($1, $2) ON CONFLICT (org_id) DO UPDATE SET purchased = notary_credits.purchased + $2', [orgId, credits]);

  it('never lets concurrent issuances overrun the free quota and credits; a refused one leaves no event and no row', async () => {
    const sut = await start();
    await buy('org_race', 2);
    const outcomes = await Promise.allSettled(Array.from({ length: 12 }, (_, i) => sut.issue('org_race', { content: `race ${i}` })));
    const issued = outcomes.filter((o) => o.status === 'fulfilled');
    const refused = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
    expect(issued).toHaveLength(FREE_ISSUANCES + 2);
    for (const r of refused) expect(r.reason).toMatchObject({ code: 'notary_paywall' });
    expect(refused[0].reason).toBeInstanceOf(DomainError);
    const [{ n }] = await t.db.query<{ n: string | number }>('SELECT count(*) AS n FROM certificates WHERE org_id = $1', ['org_race']);
    expect(Number(n)).toBe(FREE_ISSUANCES + 2);
    const [{ e }] = await t.db.query<{ e: string | number }>(`SELECT count(*) AS e FROM events WHERE type = 'certificate.issued'`);
    expect(Number(e)).toBe(FREE_ISSUANCES + 2);
    for (const o of issued) {
      const id = (o as PromiseFulfilledResult<Awaited<ReturnType<ReturnType<typeof issuerOn>>>>).value.payload.certification_id;
      expect((await t.store.readStream(certificateStream(id))).map((ev) => ev.type)).toEqual(['certificate.issued']);
    }
    // A credit bought later is one more issuance.
    await buy('org_race', 1);
    await expect(sut.issue('org_race', { content: 'after buying' })).resolves.toBeDefined();
    await expect(sut.issue('org_race', { content: 'one too many' })).rejects.toMatchObject({ code: 'notary_paywall' });
  });

  it('writes issuances of several organizations together, each against its own paywall, each verifiable', async () => {
    const sut = await start();
    await buy('org_b', 1);
    // Made in one tick, so written as one batch (one transaction).
    const outcomes = await Promise.allSettled(Array.from({ length: 12 }, (_, i) => sut.issue(i % 2 ? 'org_a' : 'org_b', { content: `mixed ${i}` })));
    const ok = outcomes.flatMap((o, i) => (o.status === 'fulfilled' ? [{ org: i % 2 ? 'org_a' : 'org_b', m: o.value }] : []));
    expect(ok.filter((o) => o.org === 'org_a')).toHaveLength(FREE_ISSUANCES);
    expect(ok.filter((o) => o.org === 'org_b')).toHaveLength(FREE_ISSUANCES + 1);
    for (const o of outcomes) if (o.status === 'rejected') expect(o.reason).toMatchObject({ code: 'notary_paywall' });
    for (const { org, m } of ok) {
      const [row] = await t.db.query<{ org_id: string }>('SELECT org_id FROM certificates WHERE certificate_id = $1', [m.payload.certification_id]);
      expect(row.org_id).toBe(org);
      expect(await sut.verify(m.payload.certification_id)).toMatchObject({ verified: true });
      expect((await t.store.verifyStream(certificateStream(m.payload.certification_id))).valid).toBe(true);
    }
    const [{ e }] = await t.db.query<{ e: string | number }>(`SELECT count(*) AS e FROM events WHERE type = 'certificate.issued'`);
    expect(Number(e)).toBe(ok.length);
  });

  it('counts what was issued before the counter existed, imported certificates aside', async () => {
    const before = [...signingKeyMigrations, ...certificateMigrations, ...creditMigrations.filter((m) => m.id !== 'notary_007_issuance_counter' && m.id !== 'notary_011_issuance_allowance')];
    const sut = await start(before);
    const row = (imported: boolean) =>
      t.db.query(
        `INSERT INTO certificates (certificate_id, org_id, schema_version, payload, signature, key_id, dataset_hash, issued_at, imported)
         VALUES ($1, 'org_old', 'service.cert.v1', '{}', 'x', $2, 'sha256:00', now(), $3)`,
        [randomUUID(), randomUUID(), imported],
      );
    await row(false);
    await row(false);
    await row(true);
    await runMigrations(t.db, creditMigrations);
    const [counter] = await t.db.query<{ issued: number; purchased: number }>('SELECT issued, purchased FROM notary_credits WHERE org_id = $1', ['org_old']);
    expect(counter).toEqual({ issued: 2, purchased: 0 });
    await expect(sut.issue('org_old', { content: 'third' })).resolves.toBeDefined();
    await expect(sut.issue('org_old', { content: 'fourth' })).rejects.toMatchObject({ code: 'notary_paywall' });
  });
});
