import { fromBase64Url, utf8 } from '../encoding/bytes';
import { verifyEd25519 } from './ed25519';

export type SigningKeyStatus = 'active' | 'retired' | 'revoked';

/** One key of `/.well-known/signing-keys.json`. */
export interface SigningKey {
  key_id: string;
  algorithm: 'Ed25519' | string;
  /** base64url (no padding) of the raw 32-byte public key. */
  public_key: string;
  created_at?: string;
  status: SigningKeyStatus;
  retired_at?: string | null;
  revoked_at?: string | null;
}

/** The keys document: every key the authority has used, with its status. */
export interface KeysDocument {
  keys: SigningKey[];
}

/** Why a signature by the authority does not verify. */
export type SignatureFailure =
  | 'invalid_keys_document'
  | 'unknown_key'
  | 'unsupported_algorithm'
  | 'invalid_key'
  | 'signature_invalid'
  | 'key_revoked'
  | 'signed_after_retirement'
  | 'invalid_signing_time';

export const REVOKED_KEY_WARNING = 'signed_by_revoked_key_before_revocation';

export type SignatureVerdict =
  | { valid: true; key: SigningKey; warnings: string[] }
  | { valid: false; reason: SignatureFailure; key: SigningKey | null };

const STATUSES: readonly string[] = ['active', 'retired', 'revoked'];

/** The document's keys, or null when it is not a keys document. */
export function keysOf(doc: unknown): SigningKey[] | null {
  if (typeof doc !== 'object' || doc === null || !Array.isArray((doc as KeysDocument).keys)) return null;
  const keys = (doc as KeysDocument).keys;
  const ok = keys.every(
    (k) =>
      typeof k === 'object' &&
      k !== null &&
      typeof k.key_id === 'string' &&
      typeof k.public_key === 'string' &&
      typeof k.algorithm === 'string' &&
      STATUSES.includes(k.status),
  );
  return ok ? keys : null;
}

/**
 * The status rule (DESIGN "Keys", the server's keyVerdict): a retired key verifies what it signed
 * before retirement; a revoked key verifies nothing signed after its revocation, and what it signed
 * before verifies with a warning. Without a real signing time no rule applies, so nothing verifies.
 */
export function keyStatusVerdict(key: SigningKey, signedAt: unknown): SignatureVerdict {
  const at = typeof signedAt === 'string' ? Date.parse(signedAt) : NaN;
  if (Number.isNaN(at)) return { valid: false, reason: 'invalid_signing_time', key };
  const time = (iso: string | null | undefined) => (typeof iso === 'string' ? Date.parse(iso) : NaN);
  if (key.status === 'revoked') {
    const revokedAt = time(key.revoked_at);
    if (at < revokedAt) {
      // Revoking a key retired earlier must not revive what its retirement refused.
      if (at > time(key.retired_at)) return { valid: false, reason: 'signed_after_retirement', key };
      return { valid: true, key, warnings: [REVOKED_KEY_WARNING] };
    }
    return { valid: false, reason: 'key_revoked', key };
  }
  if (key.status === 'retired' && at > time(key.retired_at)) return { valid: false, reason: 'signed_after_retirement', key };
  return { valid: true, key, warnings: [] };
}

/**
 * Checks the authority's signature over a hex SHA-256 digest: the signed message is the ASCII of
 * the lowercase hex (DESIGN "Signing"), the signature base64url without padding. With no key id
 * (the flat Certificate form carries none) every key of the document is tried.
 */
export function verifyDigestSignature(
  doc: unknown,
  keyId: string | null,
  digestHex: string,
  signatureValue: unknown,
  signedAt: unknown,
): SignatureVerdict {
  const keys = keysOf(doc);
  if (!keys) return { valid: false, reason: 'invalid_keys_document', key: null };
  const candidates = keyId === null ? keys : keys.filter((k) => k.key_id === keyId);
  if (candidates.length === 0) return { valid: false, reason: 'unknown_key', key: null };
  const signature = typeof signatureValue === 'string' ? fromBase64Url(signatureValue) : null;
  const message = utf8(digestHex);
  let first: SignatureVerdict | null = null;
  for (const key of candidates) {
    let verdict: SignatureVerdict;
    const publicKey = fromBase64Url(key.public_key);
    if (key.algorithm !== 'Ed25519') verdict = { valid: false, reason: 'unsupported_algorithm', key };
    else if (!publicKey || publicKey.length !== 32) verdict = { valid: false, reason: 'invalid_key', key };
    else if (!signature || !verifyEd25519(publicKey, message, signature)) verdict = { valid: false, reason: 'signature_invalid', key };
    else return keyStatusVerdict(key, signedAt);
    first ??= verdict;
  }
  return first!;
}
