import type { PublicSigningKey } from '@app/crypto';

/** Make a new active signing key; the active one is retired (`npm run cli -- signing-keys rotate`). */
export class RotateSigningKeyCommand {
  constructor(
    /** The rotation's time where the active key's row cannot be held (the in-memory store of specs); on a SQL store it is the database's clock once the row is held. */
    readonly at?: Date,
  ) {}
}

export interface RotateSigningKeyResult {
  activated: PublicSigningKey;
  retired: PublicSigningKey | null;
}
