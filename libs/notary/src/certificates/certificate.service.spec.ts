import { randomBytes, randomUUID } from 'node:crypto';
import { AppError } from '@app/core';
import { runMigrations } from '@app/event-store';
import { openTestStore } from '../../../../test/support/test-store';
import { creditMigrations } from '../credits/credits.migrations';
import { signingKeyMigrations } from '../signing-keys/signing-keys.migrations';
import { SigningKeyStore } from '../signing-keys/signing-key.store';
import { certificateMigrations } from './certificates.migrations';
import { CertificateService, certificateStream, FREE_ISSUANCES } from './certificate.service';

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
    const keys = new SigningKeyStore(t.db, t.store, kek);
    keyStores.push(keys);
    await keys.start();
    return { keys, sut: new CertificateService(t.db, t.store, keys, 'sigil.test') };
  };
  beforeEach(async () => {
    t = await openTestStore([...signingKeyMigrations, ...certificateMigrations, ...creditMigrations]);
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
});

describe('CertificateService issuance paywall (on the real store)', () => {
  let t: Awaited<ReturnType<typeof openTestStore>>;
  let keys: SigningKeyStore;
  const kek = randomBytes(32);
  afterEach(async () => {
    await keys?.stop();
    await t?.dispose();
  });
  const start = async (migrations = [...signingKeyMigrations, ...certificateMigrations, ...creditMigrations]) => {
    t = await openTestStore(migrations);
    keys = new SigningKeyStore(t.db, t.store, kek);
    await keys.start();
    return new CertificateService(t.db, t.store, keys, 'sigil.test');
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
    for (const r of refused) expect(r.reason).toMatchObject({ code: 'notary_paywall', status: 402 });
    expect(refused[0].reason).toBeInstanceOf(AppError);
    const [{ n }] = await t.db.query<{ n: string | number }>('SELECT count(*) AS n FROM certificates WHERE org_id = $1', ['org_race']);
    expect(Number(n)).toBe(FREE_ISSUANCES + 2);
    const [{ e }] = await t.db.query<{ e: string | number }>(`SELECT count(*) AS e FROM events WHERE type = 'CertificateIssued'`);
    expect(Number(e)).toBe(FREE_ISSUANCES + 2);
    for (const o of issued) {
      const id = (o as PromiseFulfilledResult<Awaited<ReturnType<CertificateService['issue']>>>).value.payload.certification_id;
      expect((await t.store.readStream(certificateStream(id))).map((ev) => ev.type)).toEqual(['CertificateIssued']);
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
    const [{ e }] = await t.db.query<{ e: string | number }>(`SELECT count(*) AS e FROM events WHERE type = 'CertificateIssued'`);
    expect(Number(e)).toBe(ok.length);
  });

  it('counts what was issued before the counter existed, imported certificates aside', async () => {
    const before = [...signingKeyMigrations, ...certificateMigrations, ...creditMigrations.filter((m) => m.id !== 'notary_007_issuance_counter')];
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
