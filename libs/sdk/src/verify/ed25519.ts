import * as ed from '@noble/ed25519';
import { sha512 } from '@noble/hashes/sha2.js';

/**
 * Strict RFC 8032 Ed25519 verification (`zip215: false`), the rule the server's node:crypto
 * verifier applies, so the two never disagree. noble's synchronous API needs a SHA-512; it is
 * set on first use rather than at import, so importing the SDK has no side effects.
 */
export function verifyEd25519(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  if (publicKey.length !== 32 || signature.length !== 64) return false;
  if (!ed.hashes.sha512) ed.hashes.sha512 = sha512;
  try {
    return ed.verify(signature, message, publicKey, { zip215: false });
  } catch {
    return false; // not a curve point, or a non-canonical encoding
  }
}
