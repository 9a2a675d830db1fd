import type { PublicSigningKey } from '@app/crypto';

/** Revoke a signing key (a compromise): `npm run cli -- signing-keys revoke <key_id>`. */
export class RevokeSigningKeyCommand {
  constructor(
    readonly keyId: string,
    /** The revocation's time where the key's row cannot be held (the in-memory store of specs); on a SQL store it is the database's clock once the row is held. */
    readonly at?: Date,
  ) {}
}

export interface RevokeSigningKeyResult {
  revoked: PublicSigningKey;
  /** The key activated in the same change when the active key was revoked. */
  activated: PublicSigningKey | null;
}
