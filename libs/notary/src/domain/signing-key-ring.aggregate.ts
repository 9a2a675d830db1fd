import { DomainError } from '@app/core';
import { KeyRing, PublicSigningKey, StoredSigningKey } from '@app/crypto';
import { derivedEventId } from './credits.aggregate';

/**
 * The authority's signing keys: one stream (`signing-keys`) of public facts. Exactly one key is
 * active; a rotation retires it and creates the next, a revocation of the active key creates the
 * next at once, and imported legacy keys are verify-only (never active, no private key). Private
 * keys never enter an event: a decision that makes a key returns its AES-256-GCM sealed private
 * key beside the events, for the repository to store in its own table.
 */
export const SIGNING_KEYS_STREAM = 'signing-keys';
export const SIGNING_KEY_CREATED = 'signing_key.created';
export const SIGNING_KEY_RETIRED = 'signing_key.retired';
export const SIGNING_KEY_REVOKED = 'signing_key.revoked';
export const SIGNING_KEY_IMPORTED = 'signing_key.imported';
export const SIGNING_KEY_EVENT_TYPES = [SIGNING_KEY_CREATED, SIGNING_KEY_RETIRED, SIGNING_KEY_REVOKED, SIGNING_KEY_IMPORTED];

export interface SigningKeyCreatedData {
  key_id: string;
  algorithm: 'Ed25519';
  public_key: string;
  created_at: string;
}
export interface SigningKeyRetiredData {
  key_id: string;
  retired_at: string | null;
}
export interface SigningKeyRevokedData {
  key_id: string;
  revoked_at: string | null;
}
export interface SigningKeyImportedData extends SigningKeyCreatedData {
  status: PublicSigningKey['status'];
  retired_at: string | null;
  verify_only: true;
}

export type SigningKeyEvent =
  | { event_id?: string; type: typeof SIGNING_KEY_CREATED; data: SigningKeyCreatedData }
  | { event_id?: string; type: typeof SIGNING_KEY_RETIRED; data: SigningKeyRetiredData }
  | { event_id?: string; type: typeof SIGNING_KEY_REVOKED; data: SigningKeyRevokedData }
  | { event_id?: string; type: typeof SIGNING_KEY_IMPORTED; data: SigningKeyImportedData };

/** A private key sealed under the key-encryption key (associated data: its key_id). */
export interface SealedSigningKey {
  key_id: string;
  encrypted_private_key: string;
}

export interface SigningKeyRingState {
  /** Revision of the stream's last event; null while the stream does not exist. */
  revision: number | null;
  /** In the order recorded. `encrypted_private_key` is null as folded; the repository adds the sealed keys it holds. */
  keys: StoredSigningKey[];
}

export const emptySigningKeyRing = (): SigningKeyRingState => ({ revision: null, keys: [] });

/** A created or imported key's public facts, as the ring and the signing_keys table hold them. */
export function publicFactsOf(type: string, d: SigningKeyImportedData) {
  const imported = type === SIGNING_KEY_IMPORTED;
  return {
    key_id: d.key_id,
    algorithm: d.algorithm,
    public_key: d.public_key,
    created_at: d.created_at,
    status: imported ? d.status : ('active' as const),
    retired_at: imported ? d.retired_at : null,
    revoked_at: null,
  };
}

/** Folds one event of the `signing-keys` stream. */
export function applySigningKeyEvent(state: SigningKeyRingState, event: { type: string; data: unknown; revision?: number }): SigningKeyRingState {
  const revision = event.revision ?? (state.revision ?? -1) + 1;
  const keys = state.keys.map((k) => ({ ...k }));
  const find = (keyId: string) => keys.find((k) => k.key_id === keyId);
  switch (event.type) {
    case SIGNING_KEY_CREATED:
    case SIGNING_KEY_IMPORTED: {
      const d = event.data as SigningKeyImportedData;
      if (find(d.key_id)) break; // the first record of a key wins (two imports of one key at once)
      keys.push({ ...publicFactsOf(event.type, d), encrypted_private_key: null });
      break;
    }
    case SIGNING_KEY_RETIRED: {
      const d = event.data as SigningKeyRetiredData;
      const key = find(d.key_id);
      if (key) Object.assign(key, { status: 'retired', retired_at: d.retired_at });
      break;
    }
    case SIGNING_KEY_REVOKED: {
      const d = event.data as SigningKeyRevokedData;
      const key = find(d.key_id);
      if (key) Object.assign(key, { status: 'revoked', revoked_at: d.revoked_at });
      break;
    }
    default:
      throw new DomainError('illegal_transition', `${event.type} is not a signing key event`, { event: event.type });
  }
  return { revision, keys };
}

export const foldSigningKeys = (events: readonly { type: string; data: unknown; revision?: number }[]): SigningKeyRingState =>
  events.reduce(applySigningKeyEvent, emptySigningKeyRing());

/** The ring of a state whose sealed keys are known (the repository's load). */
export const keyRingOf = (state: SigningKeyRingState, kek: Buffer): KeyRing => new KeyRing(kek, state.keys);

export interface SigningKeyDecision<R> {
  events: SigningKeyEvent[];
  /** The private keys the events' new keys need, sealed; stored beside the append, never in it. */
  sealed: SealedSigningKey[];
  result: R;
}

export interface KeyContext {
  kek: Buffer;
  now: Date;
}

const publicFacts = (k: PublicSigningKey): SigningKeyCreatedData => ({ key_id: k.key_id, algorithm: k.algorithm, public_key: k.public_key, created_at: k.created_at });

const sealedOf = (ring: KeyRing, keyId: string): SealedSigningKey[] => {
  const stored = ring.toStored().find((k) => k.key_id === keyId);
  return stored?.encrypted_private_key ? [{ key_id: keyId, encrypted_private_key: stored.encrypted_private_key }] : [];
};

/** The first key of an empty ring; null when the ring already has keys (another process made it). */
export function createFirstSigningKey(state: SigningKeyRingState, ctx: KeyContext): SigningKeyDecision<PublicSigningKey> | null {
  if (state.keys.length > 0) return null;
  const ring = KeyRing.create(ctx.kek, ctx.now);
  const first = ring.active();
  return { events: [{ type: SIGNING_KEY_CREATED, data: publicFacts(first) }], sealed: sealedOf(ring, first.key_id), result: first };
}

/** A new active key; the previous active key is retired (it still verifies what it signed). */
export function rotateSigningKey(state: SigningKeyRingState, ctx: KeyContext): SigningKeyDecision<{ activated: PublicSigningKey; retired: PublicSigningKey | null }> {
  const ring = keyRingOf(state, ctx.kek);
  const result = ring.rotate(ctx.now);
  const events: SigningKeyEvent[] = [];
  if (result.retired) events.push({ type: SIGNING_KEY_RETIRED, data: { key_id: result.retired.key_id, retired_at: result.retired.retired_at } });
  events.push({ type: SIGNING_KEY_CREATED, data: publicFacts(result.activated) });
  return { events, sealed: sealedOf(ring, result.activated.key_id), result };
}

/**
 * Revokes a key (a compromise). Revoking the active key activates a fresh one in the same
 * decision, so the ring never lacks a signer; revoking a revoked key records nothing.
 */
export function revokeSigningKey(
  state: SigningKeyRingState,
  keyId: string,
  ctx: KeyContext,
): SigningKeyDecision<{ revoked: PublicSigningKey; activated: PublicSigningKey | null }> {
  const known = state.keys.find((k) => k.key_id === keyId);
  if (!known) throw new DomainError('not_found', `signing key ${keyId} not found`);
  const ring = keyRingOf(state, ctx.kek);
  if (known.status === 'revoked') return { events: [], sealed: [], result: { revoked: ring.get(keyId)!, activated: null } };
  const result = ring.revoke(keyId, ctx.now);
  const events: SigningKeyEvent[] = [{ type: SIGNING_KEY_REVOKED, data: { key_id: keyId, revoked_at: result.revoked.revoked_at } }];
  if (result.activated) events.push({ type: SIGNING_KEY_CREATED, data: publicFacts(result.activated) });
  return { events, sealed: result.activated ? sealedOf(ring, result.activated.key_id) : [], result };
}

/**
 * Verify-only keys added to the ring (KeyRing.addVerifyOnly, as the legacy import plans them).
 * Each event id is derived from the key's facts, so the same import written twice is a replay.
 */
export function importVerifyOnlyKeys(added: PublicSigningKey[]): SigningKeyEvent[] {
  return added.map((k) => {
    const data: SigningKeyImportedData = { ...publicFacts(k), status: k.status, retired_at: k.retired_at, verify_only: true };
    return { event_id: derivedEventId(`${SIGNING_KEY_IMPORTED}:${k.key_id}:${k.public_key}:${k.created_at}:${k.retired_at}`), type: SIGNING_KEY_IMPORTED, data };
  });
}
