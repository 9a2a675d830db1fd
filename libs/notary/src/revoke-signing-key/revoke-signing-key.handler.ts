import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { KEY_ENCRYPTION_KEY } from '@app/core';
import { revokeSigningKey } from '../domain/signing-key-ring.aggregate';
import { SigningKeyRepository } from '../signing-keys/signing-key.repository';
import { RevokeSigningKeyCommand, RevokeSigningKeyResult } from './revoke-signing-key.command';
import { retryOnConflict } from '@app/event-store';

/**
 * Load the ring → revoke (not_found for an unknown key) → save at the ring's revision, deciding
 * while the key's row is held, as of the store's clock then (decideHoldingKey: every record the
 * key signed and that was accepted is dated before the revocation); every process stops signing
 * with it at once.
 */
@CommandHandler(RevokeSigningKeyCommand)
export class RevokeSigningKeyHandler implements ICommandHandler<RevokeSigningKeyCommand, RevokeSigningKeyResult> {
  constructor(
    private readonly keys: SigningKeyRepository,
    @Inject(KEY_ENCRYPTION_KEY) private readonly kek: Buffer,
  ) {}

  execute(cmd: RevokeSigningKeyCommand): Promise<RevokeSigningKeyResult> {
    return retryOnConflict(() => this.keys.decideHoldingKey(() => cmd.keyId, (state, now) => revokeSigningKey(state, cmd.keyId, { kek: this.kek, now })));
  }
}
