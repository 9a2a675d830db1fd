import type { PublicSigningKey } from '@app/crypto';

/**
 * Revoke a signing key (a compromise): `npm run cli -- signing-keys revoke <key_id>`, as of the
 * event store's clock once the key's row is held (SigningKeyRepository.decideHoldingKey).
 */
export class RevokeSigningKeyCommand {
  constructor(readonly keyId: string) {}
}

export interface RevokeSigningKeyResult {
  revoked: PublicSigningKey;
  /** The key activated in the same change when the active key was revoked. */
  activated: PublicSigningKey | null;
}
