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

  it('records signed with the key after a revocation asked for its row queue behind it: the revocation is not kept waiting, and they are signed again under the new key', async () => {
    const db = fresh.app.get(SqlDatabase);
    const keys = fresh.app.get(SigningKeyStore);
    const compromised = keys.current.active().key_id;
    const access = fresh.app.get(AccessService);
    const org = await access.createOrganization(`queued-${randomBytes(3).toString('hex')}`);
    const { key } = await access.createApiKey(org.org_id, { scopes: ['certificates:write'], mode: 'test' });
    let revocation!: Promise<Awaited<ReturnType<SigningKeyStore['revoke']>>>;
    let issuance!: Promise<{ statusCode: number; json(): { signing_key_id: string } }>;
    await db.transaction(async (tx) => {
      // A record in flight, as its append's guard holds the key (notRevokedSigningKey): queued, then shared.
      await tx.query('SELECT sigil_queue_behind_writers($1, $2)', [SIGNING_KEY_QUEUE, compromised]);
      await tx.query('SELECT 1 FROM signing_keys WHERE key_id = $1 FOR SHARE', [compromised]);
      revocation = keys.revoke(compromised);
      await new Promise((r) => setTimeout(r, 100));
      // A certificate asked for while the revocation waits, signed with the key still active here.
      issuance = fresh.app.inject({ method: 'POST', url: '/api/notary/create', headers: { 'x-forwarded-for': ip(), authorization: `Bearer ${key}` }, payload: { content: 'asked for during the revocation' } });
      await new Promise((r) => setTimeout(r, 200));
    });
    const { activated } = await revocation;
    const res = await issuance;
    // It waited behind the revocation rather than sharing the row ahead of it, was refused, and signed again.
    expect(res.statusCode).toBe(200);
    expect(res.json().signing_key_id).toBe(activated!.key_id);
    const [{ n }] = await db.query<{ n: string }>(`SELECT count(*) AS n FROM events WHERE type = 'certificate.issued' AND data->'manifest'->'signature'->>'key_id' = $1`, [compromised]);
    expect(Number(n)).toBe(0);
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
