import { randomBytes } from 'node:crypto';
import { EventStore, SqlEventStore } from '@app/event-store';
import { openTestStore } from '../../../../test/support/test-store';
import { CertificateReadModel } from '../certificates/certificate-read-model.repository';
import { certificatesProjection } from '../certificates/certificate.projection';
import { CertificateService } from '../certificates/certificate.service';
import { issuerOn } from '../certificates/certificate-test-issuer';
import { certificateMigrations } from '../certificates/certificates.migrations';
import { creditMigrations } from '../credits/credits.migrations';
import { revokeSigningKey, SIGNING_KEYS_STREAM } from '../domain/signing-key-ring.aggregate';
import { SigningKeyRepository, SqlSigningKeySecrets } from '../signing-keys/signing-key.repository';
import { SigningKeyStore } from '../signing-keys/signing-key.store';
import { signingKeyMigrations } from '../signing-keys/signing-keys.migrations';

/**
 * Two processes on one store: A hears every change of the signing keys, B has not heard yet
 * (its NOTIFY is still on the way), so B's ring still has the key A revoked as active. B's
 * issuance must never hand out a certificate signed by a key that is revoked when it commits:
 * the write refuses it, B reloads its ring, signs again with the active key and answers with a
 * certificate that verifies.
 */
describe('issuance by a process whose key ring is out of date (on the real store)', () => {
  let t: Awaited<ReturnType<typeof openTestStore>>;
  let a: SigningKeyStore;
  let b: SigningKeyStore;
  let verifier: CertificateService;
  const kek = randomBytes(32);

  beforeEach(async () => {
    t = await openTestStore([...signingKeyMigrations, ...certificateMigrations, ...creditMigrations], [certificatesProjection]);
    a = new SigningKeyStore(SigningKeyRepository.on(t.db, t.store), kek);
    await a.start();
    // B listens to nothing: it hears of no change until it reloads by itself.
    b = new SigningKeyStore(new SigningKeyRepository(t.store, new SqlSigningKeySecrets(t.db)), kek);
    await b.start();
    verifier = new CertificateService(new CertificateReadModel(t.db), a);
    await t.db.query(`INSERT INTO notary_credits (org_id, purchased, issued) VALUES ('org_r', 1000, 0)`);
  });
  afterEach(async () => {
    await a?.stop();
    await b?.stop();
    await t?.dispose();
  });

  const issuedWith = async (keyId: string) => {
    const [{ rows }] = await t.db.query<{ rows: string | number }>('SELECT count(*) AS rows FROM certificates WHERE key_id = $1', [keyId]);
    const events = (await t.store.readAll({ filter: { eventTypes: ['certificate.issued'] }, limit: 10_000 })).events;
    return { rows: Number(rows), events: events.filter((e) => (e.data as { manifest: { signature: { key_id: string } } }).manifest.signature.key_id === keyId).length };
  };

  const issuanceWaitingForTheKey = async () => {
    for (let i = 0; i < 100; i++) {
      const [{ n }] = await t.db.query<{ n: string | number }>(
        `SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database() AND query LIKE 'WITH appended AS MATERIALIZED%'`,
      );
      if (Number(n) > 0) return true;
      await new Promise((r) => setTimeout(r, 20));
    }
    return false;
  };

  it('re-signs with the key that replaced the revoked one; the certificate verifies, and nothing signed by the revoked key is recorded', async () => {
    const compromised = b.current.active().key_id;
    const { activated } = await a.revoke(compromised);
    expect(b.current.active().key_id).toBe(compromised); // stale

    const m = await issuerOn(t.store, b)('org_r', { content: 'issued after the revocation, by a stale process' });
    expect(m.signature.key_id).toBe(activated!.key_id);
    expect(await verifier.verify(m.payload.certification_id)).toMatchObject({ verified: true, key_id: activated!.key_id, reason: null });
    expect(await issuedWith(compromised)).toEqual({ rows: 0, events: 0 });
    expect(b.current.active().key_id).toBe(activated!.key_id); // B reloaded on the refusal
  });

  it('refuses a whole group commit signed with the revoked key, and every certificate of it is signed again and verifies', async () => {
    const compromised = b.current.active().key_id;
    const { activated } = await a.revoke(compromised);
    const issue = issuerOn(t.store, b);
    // Made in one tick: written as one batch.
    const all = await Promise.all(Array.from({ length: 20 }, (_, i) => issue('org_r', { content: `batch ${i}` })));
    for (const m of all) {
      expect(m.signature.key_id).toBe(activated!.key_id);
      expect(await verifier.verify(m.payload.certification_id)).toMatchObject({ verified: true });
    }
    expect(await issuedWith(compromised)).toEqual({ rows: 0, events: 0 });
  });

  it('signed before the revocation, committed after it: refused at commit and signed again', async () => {
    const compromised = b.current.active().key_id;
    // B signs, then its write waits while A revokes and commits.
    let release!: () => void;
    let pending!: Promise<Awaited<ReturnType<ReturnType<typeof issuerOn>>>>;
    const held = new Promise<void>((r) => (release = r));
    const signed = new Promise<void>((r) => {
      const gate = new Proxy(t.store, {
        get(target, prop, receiver) {
          if (prop !== 'append' && prop !== 'appendMany') return Reflect.get(target, prop, receiver);
          const write = Reflect.get(target, prop, receiver) as (...args: unknown[]) => Promise<unknown>;
          return async (...args: unknown[]) => {
            r();
            await held;
            return write.apply(target, args);
          };
        },
      });
      pending = issuerOn(gate as EventStore, b)('org_r', { content: 'signed before, committed after' });
    });
    await signed;
    const { activated } = await a.revoke(compromised);
    release();
    const m = await pending;
    expect(m.signature.key_id).toBe(activated!.key_id);
    expect(await verifier.verify(m.payload.certification_id)).toMatchObject({ verified: true });
    expect(await issuedWith(compromised)).toEqual({ rows: 0, events: 0 });
  });

  it('a rotation is no revocation: the stale process still signs with the retired key, within its grace, and that verifies', async () => {
    const retired = b.current.active().key_id;
    await a.rotate();
    const m = await issuerOn(t.store, b)('org_r', { content: 'issued after a rotation, by a stale process' });
    expect(m.signature.key_id).toBe(retired);
    expect(await verifier.verify(m.payload.certification_id)).toMatchObject({ verified: true, key_id: retired });
    expect(b.current.active().key_id).toBe(retired); // nothing made it reload
  });

  it('an issuance waiting on a revocation that is being committed sees it once committed, and signs again', async () => {
    const compromised = b.current.active().key_id;
    const state = await a.keys.load();
    const decision = revokeSigningKey(state, compromised, { kek, now: new Date() });
    await new SqlSigningKeySecrets(t.db).add(decision.sealed);
    let pending!: Promise<Awaited<ReturnType<ReturnType<typeof issuerOn>>>>;
    // The revocation's append holds the key's row (its update) until its transaction commits.
    await t.db.transaction(async (tx) => {
      await (t.store as SqlEventStore).appendIn(tx, SIGNING_KEYS_STREAM, decision.events, state.revision ?? 'no_stream');
      pending = issuerOn(t.store, b)('org_r', { content: 'racing the revocation' });
      // PostgreSQL: the issuance's write is there, waiting for the key's row (PGlite runs one statement at a time).
      if (t.db.kind === 'postgres') expect(await issuanceWaitingForTheKey()).toBe(true);
      else await new Promise((r) => setTimeout(r, 100));
    });
    await a.reload();
    const m = await pending;
    expect(m.signature.key_id).toBe(decision.result.activated!.key_id);
    expect(await verifier.verify(m.payload.certification_id)).toMatchObject({ verified: true });
    expect(await issuedWith(compromised)).toEqual({ rows: 0, events: 0 });
  });
});
