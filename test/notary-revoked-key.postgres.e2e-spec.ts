import { randomBytes } from 'node:crypto';
import { AccessService } from '@app/access';
import { SqlDatabase } from '@app/event-store';
import { SIGNING_KEY_QUEUE, SigningKeyStore } from '@app/notary';
import { isolatedEnv } from './support/isolated-env';
import { startTestApp, TestApp } from './support/test-app';

/**
 * Two app instances on one PostgreSQL database: one revokes the active signing key, the other has
 * not heard yet (its NOTIFY is late) and still signs with it. Its issuance is refused as it is
 * written; it answers 200 with certificates signed again under the new key, which verify on both.
 */
if (!process.env.DATABASE_URL) throw new Error('DATABASE_URL is required');

describe('issuance across two app instances while one revokes the signing key (PostgreSQL)', () => {
  let fresh: TestApp;
  let stale: TestApp;
  let iso: Awaited<ReturnType<typeof isolatedEnv>>;
  beforeAll(async () => {
    iso = await isolatedEnv();
    fresh = await startTestApp({ ...iso.env, TRUST_PROXY: 'true' });
    stale = await startTestApp({ ...iso.env, TRUST_PROXY: 'true' });
  });
  afterAll(async () => {
    await stale?.close();
    await fresh?.close();
    await iso?.dispose();
  });

  const ip = () => `10.${randomBytes(1)[0]}.${randomBytes(1)[0]}.${randomBytes(1)[0]}`;

  it('the stale instance answers 200 under the new key, the certificates verify on both, the revoked key signed nothing', async () => {
    // The stale instance hears no more of the keys' changes.
    const ring = stale.app.get(SigningKeyStore);
    await ring.stop();
    const compromised = ring.current.active().key_id;
    const { activated } = await fresh.app.get(SigningKeyStore).revoke(compromised);
    expect(ring.current.active().key_id).toBe(compromised);

    const access = stale.app.get(AccessService);
    const org = await access.createOrganization(`revoked-${randomBytes(3).toString('hex')}`);
    const { key } = await access.createApiKey(org.org_id, { scopes: ['certificates:write'], mode: 'test' });
    const answers = await Promise.all(
      Array.from({ length: 3 }, (_, i) =>
        stale.app.inject({ method: 'POST', url: '/api/notary/create', headers: { 'x-forwarded-for': ip(), authorization: `Bearer ${key}` }, payload: { content: `stale instance ${i}` } }),
      ),
    );
    for (const res of answers) {
      expect(res.statusCode).toBe(200);
      expect(res.json().signing_key_id).toBe(activated!.key_id);
      for (const app of [fresh, stale]) {
        const verdict = await app.app.inject({ method: 'POST', url: '/api/verify', headers: { 'x-forwarded-for': ip() }, payload: { certificate_id: res.json().certificate_id } });
        expect(verdict.json()).toMatchObject({ verified: true, key_id: activated!.key_id });
      }
    }
    const [{ n }] = await fresh.app.get(SqlDatabase).query<{ n: string }>(
      `SELECT count(*) AS n FROM events WHERE type = 'certificate.issued' AND data->'manifest'->'signature'->>'key_id' = $1`,
      [compromised],
    );
    expect(Number(n)).toBe(0);
  });

  it('a revocation takes effect only after every record that held the key before it has committed: what was accepted verifies', async () => {
    const db = fresh.app.get(SqlDatabase);
    const keys = fresh.app.get(SigningKeyStore);
    const compromised = keys.current.active().key_id;
    // What an issuance's append does with the key it signed with (notRevokedSigningKey): hold its
    // row shared until it commits. Its record was dated when the revocation was asked for, and it
    // commits 300 ms later.
    let revocation!: Promise<Awaited<ReturnType<SigningKeyStore['revoke']>>>;
    let askedAt = 0;
    let committedAt = 0;
    await db.transaction(async (tx) => {
      await tx.query('SELECT 1 FROM signing_keys WHERE key_id = $1 FOR SHARE', [compromised]);
      askedAt = Date.now();
      revocation = keys.revoke(compromised);
      await new Promise((r) => setTimeout(r, 300));
      committedAt = Date.now();
    });
    const { revoked, activated } = await revocation;
    // Decided once it held the row: in effect after the holder committed, not when it was asked for.
    expect(Date.parse(revoked.revoked_at!)).toBeGreaterThanOrEqual(committedAt);
    expect(Date.parse(revoked.revoked_at!)).toBeGreaterThan(askedAt + 250);
    expect(activated!.created_at).toBe(revoked.revoked_at);
    const [row] = await db.query<{ revoked_at: Date; status: string }>('SELECT revoked_at, status FROM signing_keys WHERE key_id = $1', [compromised]);
    expect([row.status, row.revoked_at.toISOString()]).toEqual(['revoked', revoked.revoked_at]);
    // The new key's sealed private key was stored with its event, in the same transaction.
    const [secret] = await db.query<{ n: string }>('SELECT count(*) AS n FROM signing_key_secrets WHERE key_id = $1', [activated!.key_id]);
    expect(Number(secret.n)).toBe(1);
    const [{ n }] = await db.query<{ n: string }>(`SELECT count(*) AS n FROM events WHERE type = 'signing_key.revoked' AND data->>'key_id' = $1`, [compromised]);
    expect(Number(n)).toBe(1);
  });

  /** Whether someone waits for a signing key's advisory lock in `mode` (polled for up to 5 s). */
  const queuedFor = async (db: SqlDatabase, mode: 'ExclusiveLock' | 'ShareLock') => {
    for (let i = 0; i < 250; i++) {
      const [{ n }] = await db.query<{ n: string }>("SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND classid = $1 AND objsubid = 2 AND mode = $2 AND NOT granted", [SIGNING_KEY_QUEUE, mode]);
      if (Number(n) > 0) return true;
      await new Promise((r) => setTimeout(r, 20));
    }
    return false;
  };

  /** A change of the ring asked for while a record in flight holds the active key, and a certificate asked for after it: what each came to. */
  async function changeWhileSigning<T>(change: (keys: SigningKeyStore, active: string) => Promise<T>) {
    const db = fresh.app.get(SqlDatabase);
    const keys = fresh.app.get(SigningKeyStore);
    await keys.reload();
    const active = keys.current.active().key_id;
    const access = fresh.app.get(AccessService);
    const org = await access.createOrganization(`queued-${randomBytes(3).toString('hex')}`);
    const { key } = await access.createApiKey(org.org_id, { scopes: ['certificates:write'], mode: 'test' });
    let changed!: Promise<T>;
    let issuance!: Promise<{ statusCode: number; json(): { certificate_id: string; signing_key_id: string } }>;
    await db.transaction(async (tx) => {
      // A record in flight, as its append's guard holds the key (notRevokedSigningKey): queued, then shared.
      await tx.query('SELECT pg_advisory_xact_lock_shared($1, hashtext($2))', [SIGNING_KEY_QUEUE, active]);
      await tx.query('SELECT 1 FROM signing_keys WHERE key_id = $1 FOR SHARE', [active]);
      changed = change(keys, active);
      expect(await queuedFor(db, 'ExclusiveLock')).toBe(true);
      // A certificate asked for while the change waits, signed with the key still active here.
      issuance = fresh.app.inject({ method: 'POST', url: '/api/notary/create', headers: { 'x-forwarded-for': ip(), authorization: `Bearer ${key}` }, payload: { content: `asked for during a change of the ring ${randomBytes(4).toString('hex')}` } });
      // It queues behind the change instead of sharing the row ahead of it.
      expect(await queuedFor(db, 'ShareLock')).toBe(true);
    });
    const result = await changed;
    const res = await issuance;
    expect(res.statusCode).toBe(200);
    const position = async (where: string, value: string) =>
      Number((await db.query<{ p: string }>(`SELECT max(global_position) AS p FROM events WHERE ${where} = $1`, [value]))[0].p);
    return { active, result, certificate: res.json(), certificateAt: await position('stream_id', `certificate-${res.json().certificate_id}`), position };
  }

  it('records signed with the key after a revocation asked for its row queue behind it: the revocation is not kept waiting, and they are signed again under the new key', async () => {
    const { active, result, certificate } = await changeWhileSigning((keys, key) => keys.revoke(key));
    // Refused once the revocation committed, and signed again.
    expect(certificate.signing_key_id).toBe(result.activated!.key_id);
    const [{ n }] = await fresh.app.get(SqlDatabase).query<{ n: string }>(`SELECT count(*) AS n FROM events WHERE type = 'certificate.issued' AND data->'manifest'->'signature'->>'key_id' = $1`, [active]);
    expect(Number(n)).toBe(0);
  });

  it('records signed with the active key queue behind a rotation too: it is not kept waiting by them', async () => {
    const { result, certificateAt, position } = await changeWhileSigning((keys) => keys.rotate());
    expect(certificateAt).toBeGreaterThan(0);
    // The rotation committed first; the certificate, signed with the key it retired (still within its grace) or the new one, after.
    expect(certificateAt).toBeGreaterThan(await position("data->>'key_id'", result.activated.key_id));
  });

  it('a revocation and a rotation at the same moment both go through, whichever commits first (the same rows, taken in the same order)', async () => {
    const a = fresh.app.get(SigningKeyStore);
    const b = stale.app.get(SigningKeyStore);
    await b.start();
    for (let round = 0; round < 5; round++) {
      const active = a.current.active().key_id;
      const [revoked, rotated] = await Promise.allSettled([a.revoke(active), b.rotate()]);
      expect([revoked.status, rotated.status]).toEqual(['fulfilled', 'fulfilled']);
      const ring = await fresh.app.get(SqlDatabase).query<{ key_id: string; status: string }>('SELECT key_id, status FROM signing_keys');
      expect(ring.filter((k) => k.status === 'active')).toHaveLength(1);
      expect(ring.find((k) => k.key_id === active)?.status).toBe('revoked');
      await a.reload();
    }
    // Every key the ring holds has its sealed private key, or is verify-only.
    const [{ n }] = await fresh.app.get(SqlDatabase).query<{ n: string }>('SELECT count(*) AS n FROM signing_keys k LEFT JOIN signing_key_secrets s USING (key_id) WHERE s.key_id IS NULL');
    expect(Number(n)).toBe(0);
  });
});
