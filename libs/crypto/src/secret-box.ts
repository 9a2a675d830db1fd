import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { fromBase64Url } from './base64url';

/**
 * AES-256-GCM encryption of secrets at rest (signing private keys), under the
 * KEY_ENCRYPTION_KEY. Format: `v1.<iv>.<tag>.<ciphertext>` in base64url. The associated data
 * (e.g. the key id) binds a ciphertext to its record, so a blob moved to another record fails.
 */
export class DecryptionError extends Error {
  constructor() {
    super('secret could not be decrypted: wrong KEY_ENCRYPTION_KEY or tampered ciphertext');
    this.name = 'DecryptionError';
  }
}

function checkKey(kek: Buffer): void {
  if (kek.length !== 32) throw new Error('KEY_ENCRYPTION_KEY must be 32 bytes');
}

export function encryptSecret(kek: Buffer, plaintext: Uint8Array, associatedData: string): string {
  checkKey(kek);
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', kek, iv);
  cipher.setAAD(Buffer.from(associatedData, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  const tag = cipher.getAuthTag();
  return ['v1', iv, tag, ciphertext].map((p) => (typeof p === 'string' ? p : p.toString('base64url'))).join('.');
}

export function decryptSecret(kek: Buffer, sealed: string, associatedData: string): Buffer {
  checkKey(kek);
  const parts = sealed.split('.');
  if (parts.length !== 4 || parts[0] !== 'v1') throw new DecryptionError();
  // Strict decoding: Buffer.from(_, 'base64url') skips stray characters, so it would accept
  // many spellings of one ciphertext.
  const [iv, tag, ciphertext] = parts.slice(1).map(fromBase64Url);
  if (!iv || !tag || !ciphertext || iv.length !== 12 || tag.length !== 16) throw new DecryptionError();
  try {
    const decipher = createDecipheriv('aes-256-gcm', kek, iv);
    decipher.setAAD(Buffer.from(associatedData, 'utf8'));
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(ciphertext), decipher.final()]);
  } catch {
    throw new DecryptionError();
  }
}
