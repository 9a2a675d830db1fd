import { randomBytes, randomUUID } from 'node:crypto';
import { canonicalJson, decryptSecret, KeyRing, PublicSigningKey, sha256Hex, signEd25519, toBase64Url } from '@app/crypto';
import { CertificatePayload, SignedManifest, signingMessage } from '@app/notary';

/**
 * The server's own signing code (libs/crypto KeyRing, libs/notary signingMessage), for SDK specs:
 * sign with the server, verify with the SDK. `signAs` can sign with any key of the ring, so tests
 * can forge what a retired or revoked key would sign after its time.
 */
export class ServerSigner {
  readonly kek = randomBytes(32);
  readonly ring: KeyRing;

  constructor(created = new Date('2025-01-01T00:00:00.000Z')) {
    this.ring = KeyRing.create(this.kek, created);
  }

  /** /.well-known/signing-keys.json as served (through JSON). */
  keysDocument(): { keys: PublicSigningKey[] } {
    return JSON.parse(JSON.stringify({ keys: this.ring.list() }));
  }

  signAs(keyId: string, message: Uint8Array): string {
    const stored = this.ring.toStored().find((k) => k.key_id === keyId);
    if (!stored?.encrypted_private_key) throw new Error(`no private key for ${keyId}`);
    return toBase64Url(signEd25519(decryptSecret(this.kek, stored.encrypted_private_key, keyId), message));
  }

  payload(overrides: Partial<CertificatePayload> = {}): CertificatePayload {
    return {
      schema_version: 'service.cert.v1',
      certification_id: randomUUID(),
      timestamp: '2025-02-01T00:00:00.000Z',
      issuer: 'Sigil test authority',
      dataset_hash: `sha256:${sha256Hex('content')}`,
      algorithm: 'jcs-sha256',
      rows: 0,
      columns: 0,
      content_type: 'text',
      filename: null,
      artifact_type: 'output',
      ...overrides,
    };
  }

  /** A signed manifest as the server issues it: the active key unless `keyId` is given. */
  manifest(payload: CertificatePayload, keyId = this.ring.active().key_id): SignedManifest {
    const value = keyId === this.ring.active().key_id ? toBase64Url(this.ring.sign(signingMessage(payload)).signature) : this.signAs(keyId, signingMessage(payload));
    return JSON.parse(JSON.stringify({ schema_version: 'service.manifest.v1', payload, signature: { alg: 'Ed25519', key_id: keyId, value } }));
  }

  /** A payment_receipt.v1 document as DESIGN "Receipt document" describes it. */
  receipt(payload: Record<string, unknown>, keyId = this.ring.active().key_id) {
    const digest = sha256Hex(canonicalJson(payload));
    return JSON.parse(
      JSON.stringify({
        schema_version: 'payment_receipt.v1',
        payload,
        receipt_hash: `sha256:${digest}`,
        signature: { alg: 'Ed25519', key_id: keyId, value: this.signAs(keyId, Buffer.from(digest, 'ascii')) },
      }),
    );
  }
}
