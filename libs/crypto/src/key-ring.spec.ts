import { randomBytes } from 'node:crypto';
import { toBase64Url } from './base64url';
import { generateEd25519KeyPair, privateKeyFromPkcs8, signEd25519, verifyEd25519 } from './ed25519';
import { KeyRing, KeyRingError, keyVerdict, PublicSigningKey, ROTATION_GRACE_MS, StoredSigningKey } from './key-ring';
import { decryptSecret, DecryptionError } from './secret-box';

const T0 = new Date('2025-01-01T00:00:00.000Z'); // ring created
const T1 = new Date('2025-02-01T00:00:00.000Z'); // rotation
const T2 = new Date('2025-03-01T00:00:00.000Z'); // revocation
const at = (base: Date, ms: number): Date => new Date(base.getTime() + ms);
const DAY = 24 * 3600 * 1000;
/** A key rotated out at T1 verifies what is dated up to this (ROTATION_GRACE_MS later). */
const T1_RETIRED = at(T1, ROTATION_GRACE_MS);

const msg = Buffer.from('{"artifact":"sha256:abc","issued_at":"2025-01-02T00:00:00Z"}');

function expectKeyRingError(fn: () => unknown, code: KeyRingError['code']): KeyRingError {
  let caught: unknown;
  try {
    fn();
  } catch (e) {
    caught = e;
  }
  expect(caught).toBeInstanceOf(KeyRingError);
  expect((caught as KeyRingError).code).toBe(code);
  expect((caught as KeyRingError).name).toBe('KeyRingError');
  return caught as KeyRingError;
}

const activeCount = (ring: KeyRing): number => ring.list().filter((k) => k.status === 'active').length;

describe('KeyRing.create', () => {
  const kek = randomBytes(32);

  it('creates a ring with exactly one active Ed25519 key', () => {
    const ring = KeyRing.create(kek, T0);
    const keys = ring.list();
    expect(keys).toHaveLength(1);
    const [key] = keys;
    expect(key).toEqual({
      key_id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
      algorithm: 'Ed25519',
      public_key: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      created_at: T0.toISOString(),
      status: 'active',
      retired_at: null,
      revoked_at: null,
    });
    expect(Buffer.from(key.public_key, 'base64url')).toHaveLength(32);
    expect(ring.active()).toEqual(key);
    expect(ring.get(key.key_id)).toEqual(key);
    expect(ring.toStored()).toHaveLength(1);
  });

  it('uses a fresh key and id each time', () => {
    const a = KeyRing.create(kek, T0).active();
    const b = KeyRing.create(kek, T0).active();
    expect(a.key_id).not.toBe(b.key_id);
    expect(a.public_key).not.toBe(b.public_key);
  });

  it('stores the private key only encrypted under the KEK, bound to the key id', () => {
    const ring = KeyRing.create(kek, T0);
    const [record] = ring.toStored();
    expect(record.encrypted_private_key).toMatch(/^v1\./);
    // Decrypt with the KEK to learn the real private key, then look for it in the stored form.
    const pkcs8 = decryptSecret(kek, record.encrypted_private_key!, record.key_id);
    expect(pkcs8).toHaveLength(48);
    const seed = pkcs8.subarray(16);
    const json = JSON.stringify(ring.toStored());
    for (const secret of [pkcs8, seed]) {
      for (const encoding of ['hex', 'base64', 'base64url'] as const) {
        expect(json).not.toContain(secret.toString(encoding));
      }
      expect(Buffer.from(json).includes(secret)).toBe(false);
    }
    // The blob is bound to its record: other associated data does not open it.
    expect(() => decryptSecret(kek, record.encrypted_private_key!, 'another-key-id')).toThrow(DecryptionError);
  });

  it('never exposes encrypted_private_key through list(), active() or get()', () => {
    const ring = KeyRing.create(kek, T0);
    ring.rotate(T1);
    const views: PublicSigningKey[] = [...ring.list(), ring.active(), ring.get(ring.active().key_id)!];
    for (const view of views) {
      expect(view).not.toHaveProperty('encrypted_private_key');
      expect(Object.keys(view).sort()).toEqual(
        ['algorithm', 'created_at', 'key_id', 'public_key', 'retired_at', 'revoked_at', 'status'].sort(),
      );
    }
    expect(JSON.stringify(ring.list())).not.toContain('v1.');
  });
});

describe('KeyRing sign / verify', () => {
  const kek = randomBytes(32);

  it('signs with the active key, and verify accepts the signature', () => {
    const ring = KeyRing.create(kek, T0);
    const { key_id, signature } = ring.sign(msg);
    expect(key_id).toBe(ring.active().key_id);
    expect(signature).toHaveLength(64);
    expect(ring.verify(key_id, msg, signature, at(T0, DAY))).toEqual({ valid: true });
    // It is a plain Ed25519 signature under the published public key.
    expect(verifyEd25519(Buffer.from(ring.active().public_key, 'base64url'), msg, signature)).toBe(true);
    // Signing again uses the cached signer and gives the same deterministic signature.
    expect(ring.sign(msg).signature.equals(signature)).toBe(true);
  });

  it("rejects a tampered message or signature with 'signature_invalid'", () => {
    const ring = KeyRing.create(kek, T0);
    const { key_id, signature } = ring.sign(msg);
    const tamperedMsg = Buffer.from(msg);
    tamperedMsg[0] ^= 1;
    expect(ring.verify(key_id, tamperedMsg, signature, at(T0, DAY))).toEqual({
      valid: false,
      reason: 'signature_invalid',
    });
    const tamperedSig = Buffer.from(signature);
    tamperedSig[10] ^= 0x80;
    expect(ring.verify(key_id, msg, tamperedSig, at(T0, DAY))).toEqual({ valid: false, reason: 'signature_invalid' });
    expect(ring.verify(key_id, msg, signature.subarray(0, 63), at(T0, DAY))).toEqual({
      valid: false,
      reason: 'signature_invalid',
    });
  });

  it("answers 'unknown_key' for a key id not in the ring", () => {
    const ring = KeyRing.create(kek, T0);
    const { signature } = ring.sign(msg);
    expect(ring.verify('00000000-0000-4000-8000-000000000000', msg, signature, at(T0, DAY))).toEqual({
      valid: false,
      reason: 'unknown_key',
    });
    // A signature by another ring's key is not this ring's business.
    const other = KeyRing.create(kek, T0);
    const foreign = other.sign(msg);
    expect(ring.verify(foreign.key_id, msg, foreign.signature, at(T0, DAY))).toEqual({
      valid: false,
      reason: 'unknown_key',
    });
  });

  it("rejects a signature presented under another of the ring's keys", () => {
    const ring = KeyRing.create(kek, T0);
    const old = ring.sign(msg);
    ring.rotate(T1);
    expect(ring.verify(ring.active().key_id, msg, old.signature, at(T1, DAY))).toEqual({
      valid: false,
      reason: 'signature_invalid',
    });
  });
});

describe('KeyRing.rotate', () => {
  const kek = randomBytes(32);

  it('retires the old key and activates a new one, keeping exactly one active key', () => {
    const ring = KeyRing.create(kek, T0);
    const first = ring.active();
    const { activated, retired } = ring.rotate(T1);
    expect(retired).toEqual({ ...first, status: 'retired', retired_at: T1_RETIRED.toISOString() });
    expect(activated.key_id).not.toBe(first.key_id);
    expect(activated).toMatchObject({ status: 'active', created_at: T1.toISOString(), retired_at: null, revoked_at: null });
    expect(ring.active()).toEqual(activated);
    expect(ring.get(first.key_id)).toEqual(retired);
    expect(ring.list().map((k) => k.key_id)).toEqual([first.key_id, activated.key_id]);
    expect(activeCount(ring)).toBe(1);

    const third = ring.rotate(at(T1, DAY));
    expect(third.retired!.key_id).toBe(activated.key_id);
    expect(ring.list()).toHaveLength(3);
    expect(activeCount(ring)).toBe(1);
    expect(ring.list().filter((k) => k.status === 'retired')).toHaveLength(2);
    // The first key keeps its original retirement time.
    expect(ring.get(first.key_id)!.retired_at).toBe(T1_RETIRED.toISOString());
  });

  it('signs with the new key after rotation', () => {
    const ring = KeyRing.create(kek, T0);
    const before = ring.sign(msg);
    const { activated } = ring.rotate(T1);
    const after = ring.sign(msg);
    expect(after.key_id).toBe(activated.key_id);
    expect(after.key_id).not.toBe(before.key_id);
    expect(ring.verify(after.key_id, msg, after.signature, at(T1, DAY))).toEqual({ valid: true });
  });

  it("still verifies what a retired key signed before retirement, but not after ('signed_after_retirement')", () => {
    const ring = KeyRing.create(kek, T0);
    const old = ring.sign(msg);
    ring.rotate(T1);
    expect(ring.verify(old.key_id, msg, old.signature, at(T0, DAY))).toEqual({ valid: true });
    expect(ring.verify(old.key_id, msg, old.signature, at(T1, -1))).toEqual({ valid: true });
    // Signed by a process that had not heard of the rotation yet: within the grace, it verifies.
    expect(ring.verify(old.key_id, msg, old.signature, at(T1, 1))).toEqual({ valid: true });
    expect(ring.verify(old.key_id, msg, old.signature, T1_RETIRED)).toEqual({ valid: true });
    expect(ring.verify(old.key_id, msg, old.signature, at(T1_RETIRED, 1))).toEqual({
      valid: false,
      reason: 'signed_after_retirement',
    });
    expect(ring.verify(old.key_id, msg, old.signature, at(T1, DAY))).toEqual({
      valid: false,
      reason: 'signed_after_retirement',
    });
    // A bad signature is reported as such, whatever the date.
    const bad = Buffer.from(old.signature);
    bad[0] ^= 1;
    expect(ring.verify(old.key_id, msg, bad, at(T0, DAY))).toEqual({ valid: false, reason: 'signature_invalid' });
  });

  it('works on a ring with no keys: the new key is active and nothing is retired', () => {
    const ring = new KeyRing(kek, []);
    expect(ring.list()).toEqual([]);
    const { activated, retired } = ring.rotate(T0);
    expect(retired).toBeNull();
    expect(ring.active()).toEqual(activated);
    expect(activeCount(ring)).toBe(1);
  });
});

describe('KeyRing.revoke', () => {
  const kek = randomBytes(32);

  it('revokes a retired key: earlier signatures verify with a warning, later ones are refused', () => {
    const ring = KeyRing.create(kek, T0);
    const old = ring.sign(msg);
    ring.rotate(T1);
    const activeBefore = ring.active();
    const { revoked, activated } = ring.revoke(old.key_id, T2);
    expect(activated).toBeNull();
    expect(revoked).toMatchObject({
      key_id: old.key_id,
      status: 'revoked',
      retired_at: T1_RETIRED.toISOString(),
      revoked_at: T2.toISOString(),
    });
    expect(revoked).not.toHaveProperty('encrypted_private_key');
    expect(ring.active()).toEqual(activeBefore);
    expect(activeCount(ring)).toBe(1);

    expect(ring.verify(old.key_id, msg, old.signature, at(T0, DAY))).toEqual({
      valid: true,
      warning: 'signed_by_revoked_key_before_revocation',
    });
    expect(ring.verify(old.key_id, msg, old.signature, T2)).toEqual({ valid: false, reason: 'key_revoked' });
    expect(ring.verify(old.key_id, msg, old.signature, at(T2, DAY))).toEqual({ valid: false, reason: 'key_revoked' });
  });

  it('does not let revocation revive signatures dated after the key was retired', () => {
    const ring = KeyRing.create(kek, T0);
    const old = ring.sign(msg);
    ring.rotate(T1);
    const between = at(T1, DAY); // after retirement, before revocation
    expect(ring.verify(old.key_id, msg, old.signature, between)).toEqual({
      valid: false,
      reason: 'signed_after_retirement',
    });
    ring.revoke(old.key_id, T2);
    expect(ring.verify(old.key_id, msg, old.signature, between).valid).toBe(false);
  });

  it('revoking the active key activates a new one at once', () => {
    const ring = KeyRing.create(kek, T0);
    const sig = ring.sign(msg);
    const { revoked, activated } = ring.revoke(sig.key_id, T2);
    expect(revoked).toMatchObject({ key_id: sig.key_id, status: 'revoked', revoked_at: T2.toISOString(), retired_at: null });
    expect(activated).not.toBeNull();
    expect(activated!.key_id).not.toBe(sig.key_id);
    expect(activated).toMatchObject({ status: 'active', created_at: T2.toISOString() });
    expect(ring.active()).toEqual(activated);
    expect(activeCount(ring)).toBe(1);

    // The ring signs with the new key straight away (the cached signer is dropped).
    const next = ring.sign(msg);
    expect(next.key_id).toBe(activated!.key_id);
    expect(ring.verify(next.key_id, msg, next.signature, at(T2, DAY))).toEqual({ valid: true });

    expect(ring.verify(sig.key_id, msg, sig.signature, at(T0, DAY))).toEqual({
      valid: true,
      warning: 'signed_by_revoked_key_before_revocation',
    });
    expect(ring.verify(sig.key_id, msg, sig.signature, at(T2, 1))).toEqual({ valid: false, reason: 'key_revoked' });
  });

  it("throws KeyRingError 'key_not_found' for an unknown key id", () => {
    const ring = KeyRing.create(kek, T0);
    const before = JSON.stringify(ring.toStored());
    const err = expectKeyRingError(() => ring.revoke('no-such-key', T2), 'key_not_found');
    expect(err.message).toContain('no-such-key');
    expect(JSON.stringify(ring.toStored())).toBe(before);
  });

  it('is idempotent: revoking twice changes nothing and activates nothing', () => {
    const ring = KeyRing.create(kek, T0);
    const first = ring.active();
    const once = ring.revoke(first.key_id, T2);
    const afterOnce = ring.list();
    const twice = ring.revoke(first.key_id, at(T2, DAY));
    expect(twice.activated).toBeNull();
    expect(twice.revoked).toEqual(once.revoked);
    expect(twice.revoked.revoked_at).toBe(T2.toISOString());
    expect(ring.list()).toEqual(afterOnce);
    expect(ring.list()).toHaveLength(2);
    expect(ring.active()).toEqual(once.activated);
    expect(activeCount(ring)).toBe(1);
  });
});

describe('KeyRing persistence', () => {
  const kek = randomBytes(32);

  it('a ring reloaded from toStored() with the same KEK signs and verifies', () => {
    const ring = KeyRing.create(kek, T0);
    const old = ring.sign(msg);
    ring.rotate(T1);
    const reloaded = new KeyRing(kek, ring.toStored());
    expect(reloaded.list()).toEqual(ring.list());
    expect(reloaded.active()).toEqual(ring.active());
    const s = reloaded.sign(msg);
    expect(s.key_id).toBe(ring.active().key_id);
    expect(s.signature.equals(ring.sign(msg).signature)).toBe(true);
    expect(reloaded.verify(s.key_id, msg, s.signature, at(T1, DAY))).toEqual({ valid: true });
    expect(ring.verify(s.key_id, msg, s.signature, at(T1, DAY))).toEqual({ valid: true });
    expect(reloaded.verify(old.key_id, msg, old.signature, at(T0, DAY))).toEqual({ valid: true });
  });

  it('a ring reloaded with a different KEK still verifies, but signing throws DecryptionError', () => {
    const ring = KeyRing.create(kek, T0);
    const s = ring.sign(msg);
    const wrong = new KeyRing(randomBytes(32), ring.toStored());
    expect(() => wrong.sign(msg)).toThrow(DecryptionError);
    expect(wrong.verify(s.key_id, msg, s.signature, at(T0, DAY))).toEqual({ valid: true });
  });

  it('a private-key blob moved to another record does not decrypt (associated data = key id)', () => {
    const ring = KeyRing.create(kek, T0);
    ring.rotate(T1);
    const [a, b] = ring.toStored();
    const swapped: StoredSigningKey[] = [
      { ...a, encrypted_private_key: b.encrypted_private_key },
      { ...b, encrypted_private_key: a.encrypted_private_key },
    ];
    expect(() => new KeyRing(kek, swapped).sign(msg)).toThrow(DecryptionError);
  });

  it('toStored() returns copies, and the constructor copies its input', () => {
    const ring = KeyRing.create(kek, T0);
    const stored = ring.toStored();
    const activeId = stored[0].key_id;
    stored[0].status = 'revoked';
    expect(ring.active().key_id).toBe(activeId);

    const input = ring.toStored();
    const copy = new KeyRing(kek, input);
    input[0].status = 'retired';
    input[0].public_key = 'x';
    expect(copy.active().key_id).toBe(activeId);
    expect(copy.active().public_key).toBe(ring.active().public_key);
  });

  it("rejects stored records with no active key: KeyRingError 'invalid_key_ring'", () => {
    const ring = KeyRing.create(kek, T0);
    ring.rotate(T1);
    const records = ring.toStored().map((k) => (k.status === 'active' ? { ...k, status: 'retired' as const, retired_at: T2.toISOString() } : k));
    expect(records.filter((k) => k.status === 'active')).toHaveLength(0);
    expectKeyRingError(() => new KeyRing(kek, records), 'invalid_key_ring');
  });

  it("rejects stored records with two active keys: KeyRingError 'invalid_key_ring'", () => {
    const ring = KeyRing.create(kek, T0);
    ring.rotate(T1);
    const records = ring.toStored().map((k) => ({ ...k, status: 'active' as const, retired_at: null }));
    expect(records).toHaveLength(2);
    const err = expectKeyRingError(() => new KeyRing(kek, records), 'invalid_key_ring');
    expect(err.message).toContain('found 2');
  });

  it("an empty ring has no signer: active() and sign() throw 'no_active_key'", () => {
    const ring = new KeyRing(kek);
    expect(ring.list()).toEqual([]);
    expect(ring.toStored()).toEqual([]);
    expect(ring.get('anything')).toBeUndefined();
    expectKeyRingError(() => ring.active(), 'no_active_key');
    expectKeyRingError(() => ring.sign(msg), 'no_active_key');
    expect(ring.verify('anything', msg, Buffer.alloc(64), T0)).toEqual({ valid: false, reason: 'unknown_key' });
  });

  it('rejects a KEK that is not 32 bytes', () => {
    expect(() => KeyRing.create(randomBytes(16), T0)).toThrow('KEY_ENCRYPTION_KEY must be 32 bytes');
  });
});

describe('keyVerdict', () => {
  const base: PublicSigningKey = {
    key_id: 'k1',
    algorithm: 'Ed25519',
    public_key: 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
    created_at: T0.toISOString(),
    status: 'active',
    retired_at: null,
    revoked_at: null,
  };

  it('refuses any key status when the signing time is not a real date', () => {
    for (const status of ['active', 'retired', 'revoked'] as const) {
      expect(keyVerdict({ ...base, status }, new Date('not a date'), true)).toEqual({ valid: false, reason: 'invalid_signing_time' });
    }
  });
  const retired: PublicSigningKey = { ...base, status: 'retired', retired_at: T1.toISOString() };
  const revoked: PublicSigningKey = { ...base, status: 'revoked', revoked_at: T2.toISOString() };
  const retiredThenRevoked: PublicSigningKey = { ...retired, status: 'revoked', revoked_at: T2.toISOString() };

  it("an invalid signature is 'signature_invalid' whatever the key's status or the date", () => {
    for (const key of [base, retired, revoked, retiredThenRevoked]) {
      for (const when of [at(T0, -DAY), T0, T1, T2, at(T2, DAY)]) {
        expect(keyVerdict(key, when, false)).toEqual({ valid: false, reason: 'signature_invalid' });
      }
    }
  });

  it('an active key verifies at any date', () => {
    for (const when of [at(T0, DAY), T1, at(T2, 365 * DAY)]) expect(keyVerdict(base, when, true)).toEqual({ valid: true });
  });

  it('a retired key verifies up to and including its retirement instant, not after', () => {
    expect(keyVerdict(retired, at(T0, DAY), true)).toEqual({ valid: true });
    expect(keyVerdict(retired, at(T1, -1), true)).toEqual({ valid: true });
    expect(keyVerdict(retired, T1, true)).toEqual({ valid: true });
    expect(keyVerdict(retired, at(T1, 1), true)).toEqual({ valid: false, reason: 'signed_after_retirement' });
    expect(keyVerdict(retired, at(T2, DAY), true)).toEqual({ valid: false, reason: 'signed_after_retirement' });
  });

  it('a revoked key verifies with a warning strictly before revocation, and refuses from revocation on', () => {
    const warn = { valid: true, warning: 'signed_by_revoked_key_before_revocation' };
    expect(keyVerdict(revoked, at(T0, DAY), true)).toEqual(warn);
    expect(keyVerdict(revoked, at(T2, -1), true)).toEqual(warn);
    expect(keyVerdict(revoked, T2, true)).toEqual({ valid: false, reason: 'key_revoked' });
    expect(keyVerdict(revoked, at(T2, DAY), true)).toEqual({ valid: false, reason: 'key_revoked' });
  });

  it('a revoked key without a revocation time verifies nothing', () => {
    const noTime: PublicSigningKey = { ...base, status: 'revoked', revoked_at: null };
    expect(keyVerdict(noTime, at(T0, -DAY), true)).toEqual({ valid: false, reason: 'key_revoked' });
    expect(keyVerdict(noTime, at(T0, DAY), true)).toEqual({ valid: false, reason: 'key_revoked' });
  });

  it('a retired-then-revoked key honours both its retirement and its revocation', () => {
    expect(keyVerdict(retiredThenRevoked, at(T0, DAY), true)).toEqual({
      valid: true,
      warning: 'signed_by_revoked_key_before_revocation',
    });
    expect(keyVerdict(retiredThenRevoked, T1, true)).toEqual({
      valid: true,
      warning: 'signed_by_revoked_key_before_revocation',
    });
    // Between retirement and revocation: it was already invalid before the revocation.
    expect(keyVerdict(retiredThenRevoked, at(T1, DAY), true)).toEqual({ valid: false, reason: 'signed_after_retirement' });
    expect(keyVerdict(retiredThenRevoked, T2, true)).toEqual({ valid: false, reason: 'key_revoked' });
    expect(keyVerdict(retiredThenRevoked, at(T2, DAY), true)).toEqual({ valid: false, reason: 'key_revoked' });
  });
});

describe('KeyRing.addVerifyOnly (imported legacy keys)', () => {
  const kek = randomBytes(32);
  const legacy = generateEd25519KeyPair();
  const legacyPrivate = privateKeyFromPkcs8(legacy.privateKeyPkcs8);
  const input = { key_id: '3f0c1a52-7d1e-4c2b-9a55-0a7f1e2d3c4b', public_key: toBase64Url(legacy.publicKey), created_at: T0.toISOString() };

  it('adds a retired key with no private key that verifies what it signed before the import', () => {
    const ring = KeyRing.create(kek, T0);
    const { key, added } = ring.addVerifyOnly(input, T2);
    expect(added).toBe(true);
    expect(key).toEqual({ ...input, algorithm: 'Ed25519', status: 'retired', retired_at: T2.toISOString(), revoked_at: null });
    expect(ring.toStored().find((k) => k.key_id === input.key_id)?.encrypted_private_key).toBeNull();
    const signature = signEd25519(legacyPrivate, msg);
    expect(ring.verify(input.key_id, msg, signature, T1)).toEqual({ valid: true });
    expect(ring.verify(input.key_id, msg, signature, at(T2, DAY))).toEqual({ valid: false, reason: 'signed_after_retirement' });
    expect(ring.verify(input.key_id, Buffer.from('other'), signature, T1)).toEqual({ valid: false, reason: 'signature_invalid' });
  });

  it('never becomes the signer: the active key still signs, rotation and reload keep it verify-only', () => {
    const ring = KeyRing.create(kek, T0);
    const own = ring.active().key_id;
    ring.addVerifyOnly(input, T1);
    expect(ring.sign(msg).key_id).toBe(own);
    ring.rotate(T2);
    const reloaded = new KeyRing(kek, ring.toStored());
    expect(reloaded.get(input.key_id)?.status).toBe('retired');
    expect(activeCount(reloaded)).toBe(1);
    expect(reloaded.active().key_id).not.toBe(input.key_id);
  });

  it('reuses a key id known with the same public key and refuses one known with another', () => {
    const ring = KeyRing.create(kek, T0);
    ring.addVerifyOnly(input, T1);
    expect(ring.addVerifyOnly(input, T2)).toMatchObject({ added: false, key: { retired_at: T1.toISOString() } });
    const other = toBase64Url(generateEd25519KeyPair().publicKey);
    expectKeyRingError(() => ring.addVerifyOnly({ ...input, public_key: other }, T2), 'key_id_conflict');
    expectKeyRingError(() => ring.addVerifyOnly({ ...input, key_id: ring.active().key_id, public_key: other }, T2), 'key_id_conflict');
  });

  it('refuses a public key that is not 32 bytes of base64url', () => {
    const ring = KeyRing.create(kek, T0);
    for (const public_key of ['', 'AAAA', `${input.public_key}=`, toBase64Url(randomBytes(33))]) {
      expectKeyRingError(() => ring.addVerifyOnly({ ...input, public_key }, T1), 'invalid_public_key');
    }
  });

  it('refuses a stored ring whose active key has no private key', () => {
    const stored = KeyRing.create(kek, T0).toStored().map((k) => ({ ...k, encrypted_private_key: null }));
    expectKeyRingError(() => new KeyRing(kek, stored), 'invalid_key_ring');
  });
});
