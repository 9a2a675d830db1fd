import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { DomainError, KEY_ENCRYPTION_KEY } from '@app/core';
import { revokeSigningKey } from '../domain/signing-key-ring.aggregate';
import { RevocationRecordedLate, SigningKeyRepository } from '../signing-keys/signing-key.repository';
import { RevokeSigningKeyCommand, RevokeSigningKeyResult } from './revoke-signing-key.command';
import { retryOnConflict } from '@app/event-store';

/** How many times a revocation is decided when its append keeps holding the key's row too late (REVOCATION_SETTLE_MS). */
const MAX_REVOCATION_ATTEMPTS = 3;

/**
 * Load the ring → revoke (not_found for an unknown key) → save at the ring's revision; every
 * process stops signing with it at once. A save that held the key's row only after the
 * revocation's time wrote nothing, and is decided again as of the time it is then.
 */
@CommandHandler(RevokeSigningKeyCommand)
export class RevokeSigningKeyHandler implements ICommandHandler<RevokeSigningKeyCommand, RevokeSigningKeyResult> {
  constructor(
    private readonly keys: SigningKeyRepository,
    @Inject(KEY_ENCRYPTION_KEY) private readonly kek: Buffer,
  ) {}

  async execute(cmd: RevokeSigningKeyCommand): Promise<RevokeSigningKeyResult> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await retryOnConflict(async () => {
          const state = await this.keys.load();
          const decision = revokeSigningKey(state, cmd.keyId, { kek: this.kek, now: attempt === 1 ? (cmd.at ?? new Date()) : new Date() });
          await this.keys.save(state, decision);
          return decision.result;
        });
      } catch (err) {
        if (!(err instanceof RevocationRecordedLate)) throw err;
        if (attempt >= MAX_REVOCATION_ATTEMPTS) {
          throw new DomainError('concurrent_modification', 'The revocation could not be recorded in time (the signing key stayed in use); retry', undefined, 1);
        }
      }
    }
  }
}
