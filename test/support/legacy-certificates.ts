import { createHash, generateKeyPairSync, KeyObject, randomBytes, randomUUID, sign } from 'node:crypto';
import { canonicalJson } from '@app/crypto';
import type { CertificatePayload } from '@app/notary';

/**
 * Builders for legacy `cert.v2` import files: a legacy authority's Ed25519 key (node:crypto) and
 * manifests signed by DESIGN's rule: Ed25519 over the ASCII lowercase hex SHA-256 of the RFC 8785
 * bytes of the payload, base64url without padding.
 */
export interface LegacySigner {
  keyId: string;
  /** base64url of the raw 32-byte public key. */
  publicKey: string;
  privateKey: KeyObject;
}

export function legacySigner(): LegacySigner {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  return { keyId: randomUUID(), publicKey: publicKey.export({ format: 'jwk' }).x as string, privateKey };
}

export type LegacyPayload = CertificatePayload;

export function legacyPayload(overrides: Record<string, unknown> = {}): LegacyPayload {
  return {
    schema_version: 'cert.v2',
    certification_id: randomUUID(),
    timestamp: '2024-05-01T10:00:00.000Z',
    issuer: 'legacy.example.org',
    dataset_hash: `sha256:${createHash('sha256').update(randomBytes(16)).digest('hex')}`,
    algorithm: 'sha256',
    rows: 12,
    columns: 3,
    ...overrides,
  };
}

export const legacySignature = (signer: LegacySigner, payload: unknown): string =>
  sign(null, Buffer.from(createHash('sha256').update(canonicalJson(payload)).digest('hex'), 'ascii'), signer.privateKey).toString('base64url');

export interface LegacyManifestFile {
  schema_version: string;
  payload: LegacyPayload;
  signature: { alg: 'Ed25519'; key_id: string; value: string };
  public_key?: string;
}

/** A signed legacy manifest; `withPublicKey: false` leaves the key out (already registered). */
export function legacyManifest(signer: LegacySigner, overrides: Record<string, unknown> = {}, options: { withPublicKey?: boolean } = {}): LegacyManifestFile {
  const payload = legacyPayload(overrides);
  return {
    schema_version: payload.schema_version,
    payload,
    signature: { alg: 'Ed25519', key_id: signer.keyId, value: legacySignature(signer, payload) },
    ...(options.withPublicKey === false ? {} : { public_key: signer.publicKey }),
  };
}
