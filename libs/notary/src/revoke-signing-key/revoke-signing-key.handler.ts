import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { KEY_ENCRYPTION_KEY } from '@app/core';
import { revokeSigningKey } from '../domain/signing-key-ring.aggregate';
import { SigningKeyRepository } from '../signing-keys/signing-key.repository';
import { RevokeSigningKeyCommand, RevokeSigningKeyResult } from './revoke-signing-key.command';
import { retryOnConflict } from '@app/event-store';

/** Load the ring → revoke (not_found for an unknown key) → save at the ring's revision; every process stops signing with it at once. */
@CommandHandler(RevokeSigningKeyCommand)
export class RevokeSigningKeyHandler implements ICommandHandler<RevokeSigningKeyCommand, RevokeSigningKeyResult> {
  constructor(
    private readonly keys: SigningKeyRepository,
    @Inject(KEY_ENCRYPTION_KEY) private readonly kek: Buffer,
  ) {}

  execute(cmd: RevokeSigningKeyCommand): Promise<RevokeSigningKeyResult> {
    return retryOnConflict(async () => {
      const state = await this.keys.load();
      const decision = revokeSigningKey(state, cmd.keyId, { kek: this.kek, now: cmd.at ?? new Date() });
      await this.keys.save(state, decision);
      return decision.result;
    });
  }
}
