import { decryptSecret, encryptSecret } from '@app/crypto';

/** What idempotency_keys holds instead of a sealed response: `v1.<iv>.<tag>.<ciphertext>` of its JSON. */
export interface SealedResponse {
  sealed: string;
}

/** Binds a sealed response to its row: it opens only as the response of this organization's key. */
const aad = (owner: string, key: string) => `idempotency-response:${owner.length}:${owner}:${key}`;

/**
 * Seals a response body for storage (AES-256-GCM under the key-encryption key, as webhook
 * secrets and signing keys are sealed), so a secret it holds is never stored in plain text.
 */
export function sealResponse(kek: Buffer, owner: string, key: string, body: unknown): SealedResponse {
  return { sealed: encryptSecret(kek, Buffer.from(JSON.stringify(body ?? null), 'utf8'), aad(owner, key)) };
}

/** The body `sealResponse` sealed; throws on another key-encryption key or a row not its own. */
export function openResponse<T>(kek: Buffer, owner: string, key: string, stored: SealedResponse): T {
  return JSON.parse(decryptSecret(kek, stored.sealed, aad(owner, key)).toString('utf8')) as T;
}
