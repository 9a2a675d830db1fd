import { randomUUID } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { toBase64Url } from './base64url';
import { fromBase64Url } from './base64url';
import { generateEd25519KeyPair, isEd25519PublicKey, privateKeyFromPkcs8, signEd25519, verifyEd25519 } from './ed25519';
import { decryptSecret, encryptSecret } from './secret-box';

export type SigningKeyStatus = 'active' | 'retired' | 'revoked';

/**
 * How long after a rotation the retired key still verifies what it signed: its `retired_at` is the
 * rotation's time plus this. Every process signs with the ring it last loaded, and hears of a
 * rotation only once it is committed and announced (NOTIFY, then a reload), so records signed
 * meanwhile carry the old key and a time after the rotation was decided; with `retired_at` at the
 * rotation's time they never verified. A revocation (a compromise) takes no grace.
 */
export const ROTATION_GRACE_MS = 5 * 60 * 1000;

/** A signing key as stored: the private key only ever encrypted. */
export interface StoredSigningKey {
  key_id: string;
  algorithm: 'Ed25519';
  /** base64url of the raw 32-byte public key. */
  public_key: string;
  created_at: string;
  status: SigningKeyStatus;
  retired_at: string | null;
  revoked_at: string | null;
  /**
   * AES-256-GCM sealed PKCS#8, associated data = key_id. Null for a verify-only key (an imported
   * legacy key: we hold its public half only, so it can never be active).
   */
  encrypted_private_key: string | null;
}

/** The public half of a key someone else signed with, to be kept for verification only. */
export interface VerifyOnlyKeyInput {
  key_id: string;
  /** base64url of the raw 32-byte public key. */
  public_key: string;
  created_at: string;
}

/** The public view published in /.well-known/signing-keys.json. */
export type PublicSigningKey = Omit<StoredSigningKey, 'encrypted_private_key'>;

export class KeyRingError extends Error {
  constructor(
    readonly code: 'key_not_found' | 'key_revoked' | 'no_active_key' | 'invalid_key_ring' | 'key_id_conflict' | 'invalid_public_key',
    message: string,
  ) {
    super(message);
    this.name = 'KeyRingError';
  }
}

export type KeyVerdict =
  | { valid: true; warning?: 'signed_by_revoked_key_before_revocation' }
  | { valid: false; reason: 'unknown_key' | 'signature_invalid' | 'key_revoked' | 'signed_after_retirement' | 'invalid_signing_time' };

/**
 * The signing keys of the authority, with the rule that exactly one key is `active`.
 * Pure state plus crypto: persistence is the caller's (it stores `toStored()` records).
 */
export class KeyRing {
  private readonly keys = new Map<string, StoredSigningKey>();
  private activeSigner: { keyId: string; key: KeyObject } | null = null;

  constructor(
    private readonly kek: Buffer,
    stored: StoredSigningKey[] = [],
  ) {
    for (const k of stored) this.keys.set(k.key_id, { ...k });
    const active = stored.filter((k) => k.status === 'active');
    if (stored.length > 0 && active.length !== 1) {
      throw new KeyRingError('invalid_key_ring', `key ring must have exactly one active key, found ${active.length}`);
    }
    if (active.some((k) => k.encrypted_private_key === null)) {
      throw new KeyRingError('invalid_key_ring', 'the active key has no private key (a verify-only key can never be active)');
    }
  }

  /** Creates the first key of an empty ring. */
  static create(kek: Buffer, now: Date = new Date()): KeyRing {
    const ring = new KeyRing(kek);
    const first = ring.newKey(now);
    ring.keys.set(first.key_id, first);
    return ring;
  }

  private newKey(now: Date): StoredSigningKey {
    const pair = generateEd25519KeyPair();
    const keyId = randomUUID();
    return {
      key_id: keyId,
      algorithm: 'Ed25519',
      public_key: toBase64Url(pair.publicKey),
      created_at: now.toISOString(),
      status: 'active',
      retired_at: null,
      revoked_at: null,
      encrypted_private_key: encryptSecret(this.kek, pair.privateKeyPkcs8, keyId),
    };
  }

  active(): PublicSigningKey {
    const key = [...this.keys.values()].find((k) => k.status === 'active');
    if (!key) throw new KeyRingError('no_active_key', 'the key ring has no active key');
    return publicView(key);
  }

  get(keyId: string): PublicSigningKey | undefined {
    const key = this.keys.get(keyId);
    return key && publicView(key);
  }

  list(): PublicSigningKey[] {
    return [...this.keys.values()].sort((a, b) => a.created_at.localeCompare(b.created_at)).map(publicView);
  }

  toStored(): StoredSigningKey[] {
    return [...this.keys.values()].map((k) => ({ ...k }));
  }

  /**
   * A new active key; the previous active key becomes `retired`: it signs no more, and verifies
   * what it signed dated up to `retired_at`, ROTATION_GRACE_MS after `now` (see there).
   */
  rotate(now: Date = new Date()): { activated: PublicSigningKey; retired: PublicSigningKey | null } {
    const previous = [...this.keys.values()].find((k) => k.status === 'active') ?? null;
    if (previous) {
      previous.status = 'retired';
      previous.retired_at = new Date(now.getTime() + ROTATION_GRACE_MS).toISOString();
    }
    const next = this.newKey(now);
    this.keys.set(next.key_id, next);
    this.activeSigner = null;
    return { activated: publicView(next), retired: previous && publicView(previous) };
  }

  /**
   * Revokes a key. Revoking the active key (a compromise) activates a fresh key at once,
   * so the ring never lacks a signer.
   */
  revoke(keyId: string, now: Date = new Date()): { revoked: PublicSigningKey; activated: PublicSigningKey | null } {
    const key = this.keys.get(keyId);
    if (!key) throw new KeyRingError('key_not_found', `signing key ${keyId} not found`);
    if (key.status === 'revoked') return { revoked: publicView(key), activated: null };
    const wasActive = key.status === 'active';
    key.status = 'revoked';
    key.revoked_at = now.toISOString();
    let activated: PublicSigningKey | null = null;
    if (wasActive) {
      const next = this.newKey(now);
      this.keys.set(next.key_id, next);
      this.activeSigner = null;
      activated = publicView(next);
    }
    return { revoked: publicView(key), activated };
  }

  /**
   * Adds a verify-only key (an imported legacy key): no private key, never active, `retired` as
   * of `now`, so it verifies what it signed before and nothing dated later. A key id already in
   * the ring is reused when its public key is the same and refused otherwise.
   */
  addVerifyOnly(input: VerifyOnlyKeyInput, now: Date = new Date()): { key: PublicSigningKey; added: boolean } {
    const raw = fromBase64Url(input.public_key);
    if (!raw || !isEd25519PublicKey(raw)) {
      throw new KeyRingError('invalid_public_key', `public key of ${input.key_id} is not a base64url Ed25519 public key (32 bytes)`);
    }
    const existing = this.keys.get(input.key_id);
    if (existing) {
      if (existing.public_key !== input.public_key) {
        throw new KeyRingError('key_id_conflict', `signing key ${input.key_id} is already known with another public key`);
      }
      return { key: publicView(existing), added: false };
    }
    const key: StoredSigningKey = {
      key_id: input.key_id,
      algorithm: 'Ed25519',
      public_key: input.public_key,
      created_at: input.created_at,
      status: 'retired',
      retired_at: now.toISOString(),
      revoked_at: null,
      encrypted_private_key: null,
    };
    this.keys.set(key.key_id, key);
    return { key: publicView(key), added: true };
  }

  /** Signs with the active key. The private key is decrypted once and kept as a KeyObject. */
  sign(message: Uint8Array): { key_id: string; signature: Buffer } {
    const active = this.active();
    if (!this.activeSigner || this.activeSigner.keyId !== active.key_id) {
      const stored = this.keys.get(active.key_id)!;
      if (stored.encrypted_private_key === null) throw new KeyRingError('invalid_key_ring', 'the active key has no private key');
      const der = decryptSecret(this.kek, stored.encrypted_private_key, stored.key_id);
      this.activeSigner = { keyId: stored.key_id, key: privateKeyFromPkcs8(der) };
    }
    return { key_id: active.key_id, signature: signEd25519(this.activeSigner.key, message) };
  }

  /** Verifies a signature made by one of this ring's keys, honouring the key's status. */
  verify(keyId: string, message: Uint8Array, signature: Uint8Array, signedAt: Date): KeyVerdict {
    const key = this.keys.get(keyId);
    if (!key) return { valid: false, reason: 'unknown_key' };
    return keyVerdict(key, signedAt, verifyEd25519(Buffer.from(key.public_key, 'base64url'), message, signature));
  }
}

function publicView(key: StoredSigningKey): PublicSigningKey {
  const { encrypted_private_key: _sealed, ...rest } = key;
  return rest;
}

/**
 * The status rule: a retired key verifies what it signed before retirement; a revoked key
 * verifies nothing signed after its revocation, and what it signed before verifies with a warning.
 */
export function keyVerdict(key: PublicSigningKey, signedAt: Date, signatureValid: boolean): KeyVerdict {
  if (!signatureValid) return { valid: false, reason: 'signature_invalid' };
  const at = signedAt.getTime();
  // Without a real signing time no status rule can be applied, so nothing verifies.
  if (Number.isNaN(at)) return { valid: false, reason: 'invalid_signing_time' };
  if (key.status === 'revoked') {
    if (key.revoked_at && at < Date.parse(key.revoked_at)) {
      // A key retired before its revocation: revoking it must not revive what retirement refused.
      if (key.retired_at && at > Date.parse(key.retired_at)) {
        return { valid: false, reason: 'signed_after_retirement' };
      }
      return { valid: true, warning: 'signed_by_revoked_key_before_revocation' };
    }
    return { valid: false, reason: 'key_revoked' };
  }
  if (key.status === 'retired' && key.retired_at && at > Date.parse(key.retired_at)) {
    return { valid: false, reason: 'signed_after_retirement' };
  }
  return { valid: true };
}
