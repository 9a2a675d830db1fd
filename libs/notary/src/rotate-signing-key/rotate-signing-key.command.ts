import type { PublicSigningKey } from '@app/crypto';

/**
 * Make a new active signing key; the active one is retired (`npm run cli -- signing-keys rotate`),
 * as of the event store's clock once its row is held (SigningKeyRepository.decideHoldingKey).
 */
export class RotateSigningKeyCommand {}

export interface RotateSigningKeyResult {
  activated: PublicSigningKey;
  retired: PublicSigningKey | null;
}
