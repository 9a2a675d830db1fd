import type { PublicSigningKey } from '@app/crypto';

/** Revoke a signing key (a compromise): `npm run cli -- signing-keys revoke <key_id>`. */
export class RevokeSigningKeyCommand {
  constructor(
    readonly keyId: string,
    readonly at?: Date,
  ) {}
}

export interface RevokeSigningKeyResult {
  revoked: PublicSigningKey;
  /** The key activated in the same change when the active key was revoked. */
  activated: PublicSigningKey | null;
}
