/**
 * Who signs certificates and how this authority names itself: the active signing key and the
 * service's host (provided by the notary module; a fixed key in specs).
 */
export abstract class CertificateAuthority {
  abstract readonly issuer: string;
  abstract sign(message: Buffer): { key_id: string; signature: Buffer };
}
