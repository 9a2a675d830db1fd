/**
 * Who signs certificates and how this authority names itself: the active signing key and the
 * service's host (provided by the notary module; a fixed key in specs).
 */
export abstract class CertificateAuthority {
  abstract readonly issuer: string;
  abstract sign(message: Buffer): { key_id: string; signature: Buffer };
  /**
   * Reads the signing keys again, after a certificate this authority signed was refused because
   * its key is revoked: the keys it signed with were out of date.
   */
  abstract refresh(): Promise<void>;
}
