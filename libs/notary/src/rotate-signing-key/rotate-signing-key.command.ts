import type { PublicSigningKey } from '@app/crypto';

/** Make a new active signing key; the active one is retired (`npm run cli -- signing-keys rotate`). */
export class RotateSigningKeyCommand {
  constructor(readonly at?: Date) {}
}

export interface RotateSigningKeyResult {
  activated: PublicSigningKey;
  retired: PublicSigningKey | null;
}
