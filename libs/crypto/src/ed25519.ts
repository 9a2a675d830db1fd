import { createPrivateKey, createPublicKey, generateKeyPairSync, KeyObject, sign, verify } from 'node:crypto';

/**
 * Ed25519 on node:crypto (OpenSSL). Verification is strict RFC 8032, the same rule the SDK's
 * @noble/ed25519 verifier applies with zip215: false, so server and SDK never disagree.
 */
export interface Ed25519KeyPair {
  /** Raw 32-byte public key. */
  publicKey: Buffer;
  /** PKCS#8 DER private key. Never store this unencrypted. */
  privateKeyPkcs8: Buffer;
}

export function generateEd25519KeyPair(): Ed25519KeyPair {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  return {
    publicKey: rawPublicKey(publicKey),
    privateKeyPkcs8: privateKey.export({ format: 'der', type: 'pkcs8' }),
  };
}

function rawPublicKey(key: KeyObject): Buffer {
  const jwk = key.export({ format: 'jwk' });
  return Buffer.from(jwk.x as string, 'base64url');
}

export function privateKeyFromPkcs8(der: Uint8Array): KeyObject {
  return createPrivateKey({ key: Buffer.from(der), format: 'der', type: 'pkcs8' });
}

export function publicKeyOf(privateKey: KeyObject): Buffer {
  return rawPublicKey(createPublicKey(privateKey));
}

export function signEd25519(privateKey: KeyObject | Uint8Array, message: Uint8Array): Buffer {
  const key = privateKey instanceof KeyObject ? privateKey : privateKeyFromPkcs8(privateKey);
  return sign(null, message, key);
}

// Importing a public key costs more than the verification itself; keys are few, so cache them.
const publicKeyCache = new Map<string, KeyObject | null>();

function importPublicKey(raw: Uint8Array): KeyObject | null {
  const id = Buffer.from(raw).toString('base64url');
  let key = publicKeyCache.get(id);
  if (key === undefined) {
    try {
      key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: id }, format: 'jwk' });
    } catch {
      key = null; // not a valid curve point encoding
    }
    if (publicKeyCache.size > 1000) publicKeyCache.clear();
    publicKeyCache.set(id, key);
  }
  return key;
}

/** True when `raw` is 32 bytes that decode to an Ed25519 public key. */
export function isEd25519PublicKey(raw: Uint8Array): boolean {
  return raw.length === 32 && importPublicKey(raw) !== null;
}

/** True only for a valid signature; malformed keys or signatures are simply invalid. */
export function verifyEd25519(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  if (publicKey.length !== 32 || signature.length !== 64) return false;
  const key = importPublicKey(publicKey);
  if (!key) return false;
  try {
    return verify(null, message, key, signature);
  } catch {
    return false;
  }
}
