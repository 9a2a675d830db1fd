import { randomBytes, randomUUID } from 'node:crypto';
import { generateEd25519KeyPair, toBase64Url } from '@app/crypto';
import { openTestStore } from '../../../../test/support/test-store';
import { signingKeyMigrations } from './signing-keys.migrations';
import { importVerifyOnlyKeys, keyRingOf } from '../domain/signing-key-ring.aggregate';
import { SigningKeyRepository } from './signing-key.repository';
import { SIGNING_KEYS_STREAM, SigningKeyStore } from './signing-key.store';

describe('SigningKeyStore (on the real store)', () => {
  let t: Awaited<ReturnType<typeof openTestStore>>;
  const kek = randomBytes(32);
  beforeEach(async () => {
    t = await openTestStore(signingKeyMigrations);
  });
  afterEach(() => t?.dispose());

  it('creates one active key once, and keeps private keys out of events and in sealed form only', async () => {
    const a = new SigningKeyStore(SigningKeyRepository.on(t.db, t.store), kek);
    const b = new SigningKeyStore(SigningKeyRepository.on(t.db, t.store), kek);
    const c = new SigningKeyStore(SigningKeyRepository.on(t.db, t.store), kek);
    await Promise.all([a.start(), b.start(), c.start()]);
    expect(a.current.list()).toHaveLength(1);
    expect(b.current.active().key_id).toBe(a.current.active().key_id);
    expect(c.current.active().key_id).toBe(a.current.active().key_id);
    // The losers' sealed keys were discarded with their refused appends.
    expect(await t.db.query('SELECT key_id FROM signing_key_secrets')).toEqual([{ key_id: a.current.active().key_id }]);
    await c.stop();
    const events = await t.store.readStream(SIGNING_KEYS_STREAM);
    expect(events.map((e) => e.type)).toEqual(['signing_key.created']);
    expect(JSON.stringify(events)).not.toMatch(/private|encrypted/);
    const [secret] = await t.db.query<{ encrypted_private_key: string }>('SELECT encrypted_private_key FROM signing_key_secrets');
    expect(secret.encrypted_private_key).toMatch(/^v1\./);
    await a.stop();
    await b.stop();
  });

  it('persists rotation and revocation, as events and in the reloaded ring', async () => {
    const s = new SigningKeyStore(SigningKeyRepository.on(t.db, t.store), kek);
    await s.start();
    const first = s.current.active().key_id;
    const { activated } = await s.rotate();
    await s.revoke(first);
    const again = new SigningKeyStore(SigningKeyRepository.on(t.db, t.store), kek);
    await again.start();
    expect(again.current.active().key_id).toBe(activated.key_id);
    expect(again.current.get(first)?.status).toBe('revoked');
    expect((await t.store.readStream(SIGNING_KEYS_STREAM)).map((e) => e.type)).toEqual([
      'signing_key.created',
      'signing_key.retired',
      'signing_key.created',
      'signing_key.revoked',
    ]);
    expect((await t.store.verifyStream(SIGNING_KEYS_STREAM)).valid).toBe(true);
    // The public facts are the signing_keys projection: a rebuild writes the same rows.
    const rows = () => t.db.query('SELECT key_id, status, retired_at, revoked_at FROM signing_keys ORDER BY key_id');
    const before = await rows();
    expect(before).toHaveLength(2);
    await t.store.rebuildProjection('notary_signing_keys');
    expect(await rows()).toEqual(before);
    await s.stop();
    await again.stop();
  });

  it('refuses to start under a key-encryption key that does not open the stored keys', async () => {
    const s = new SigningKeyStore(SigningKeyRepository.on(t.db, t.store), kek);
    await s.start();
    await s.stop();
    const wrong = new SigningKeyStore(SigningKeyRepository.on(t.db, t.store), randomBytes(32));
    await expect(wrong.start()).rejects.toThrow(/KEY_ENCRYPTION_KEY does not decrypt the stored signing keys/);
    await wrong.stop();
  });

  it('keeps an imported verify-only key through reloads, rotations and restarts, with no secret', async () => {
    const s = new SigningKeyStore(SigningKeyRepository.on(t.db, t.store), kek);
    await s.start();
    const legacy = { key_id: randomUUID(), public_key: toBase64Url(generateEd25519KeyPair().publicKey), created_at: '2024-01-01T00:00:00.000Z' };
    // As the legacy import records it: the verify-only key's event, at any revision of the ring.
    const ring = keyRingOf(await s.keys.load(), kek);
    const { key } = ring.addVerifyOnly(legacy);
    await t.store.appendMany([s.keys.importAppend(importVerifyOnlyKeys([key]))]);
    await s.announce();
    expect(s.current.get(legacy.key_id)).toMatchObject({ status: 'retired', public_key: legacy.public_key });
    await s.rotate();
    const again = new SigningKeyStore(SigningKeyRepository.on(t.db, t.store), kek);
    await again.start(); // the KEK check signs with the active key, never the verify-only one
    expect(again.current.get(legacy.key_id)?.status).toBe('retired');
    expect(again.current.list().filter((k) => k.status === 'active')).toHaveLength(1);
    expect(await t.db.query('SELECT 1 FROM signing_key_secrets WHERE key_id = $1', [legacy.key_id])).toEqual([]);
    const events = await t.store.readStream(SIGNING_KEYS_STREAM);
    expect(events.map((e) => e.type)).toEqual(['signing_key.created', 'signing_key.imported', 'signing_key.retired', 'signing_key.created']);
    expect(events[1].data).toEqual({ ...legacy, algorithm: 'Ed25519', status: 'retired', retired_at: expect.any(String), verify_only: true });
    await s.stop();
    await again.stop();
  });
});
