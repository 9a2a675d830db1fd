import type { SignedManifest } from '../domain/certificate';

export interface CertificateRow {
  certificate_id: string;
  /** The payload column as text, exactly as stored. */
  payload: string;
  signature: string;
  key_id: string;
  imported: boolean;
}

export const sameRow = (a: CertificateRow, b: CertificateRow): boolean =>
  a.payload === b.payload && a.signature === b.signature && a.key_id === b.key_id && a.imported === b.imported;

/**
 * A certificate as last read, with its signature check. The row is read again on every request
 * (a stored record altered behind the service's back must stop verifying at once, on every
 * process); when it is still the same text, the parsed manifest and the Ed25519 check are
 * reused. The check holds for the public key it was made with (a key id never changes its
 * public key); the key's status (retired, revoked) is applied by the caller on every request.
 */
export interface CachedCertificate {
  /** The row as stored: the payload's JSON text and the signature fields. */
  readonly row: CertificateRow;
  readonly manifest: SignedManifest;
  /** The payload names another certificate than its row: it certifies that one, not this. */
  readonly namesAnother: boolean;
  /** The signature check, for the public key it was made with (null: the key id was unknown). */
  signature?: { readonly publicKey: string | null; readonly check: SignatureCheck };
}

/** `malformed`: the signature or the payload cannot be checked at all (whatever the key). */
export type SignatureCheck = 'valid' | 'invalid' | 'malformed' | 'unknown_key';
