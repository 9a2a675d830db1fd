import type { Signer } from '../receipts/signed-record';

/** How commerce signs its decision records and receipts, and names itself in them (the service's active key and host). */
export abstract class CommerceAuthority {
  abstract readonly issuer: string;
  abstract readonly sign: Signer;
  /** Whether live-mode transactions have a provider to settle through. */
  abstract readonly liveProvider: boolean;
  /**
   * Reads the signing keys again, after a record this authority signed was refused because its
   * key is revoked: the keys it signed with were out of date.
   */
  abstract refresh(): Promise<void>;
}
