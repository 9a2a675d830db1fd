import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { KEY_ENCRYPTION_KEY } from '@app/core';
import { rotateSigningKey } from '../domain/signing-key-ring.aggregate';
import { SigningKeyRepository } from '../signing-keys/signing-key.repository';
import { RotateSigningKeyCommand, RotateSigningKeyResult } from './rotate-signing-key.command';
import { retryOnConflict } from '@app/event-store';

/**
 * Load the ring → rotate → save at the ring's revision (a lost race decides again), deciding while
 * the active key's row is held (decideHoldingKey: records signed with it meanwhile queue behind the
 * rotation rather than keep it waiting); every process reloads.
 */
@CommandHandler(RotateSigningKeyCommand)
export class RotateSigningKeyHandler implements ICommandHandler<RotateSigningKeyCommand, RotateSigningKeyResult> {
  constructor(
    private readonly keys: SigningKeyRepository,
    @Inject(KEY_ENCRYPTION_KEY) private readonly kek: Buffer,
  ) {}

  execute(_cmd: RotateSigningKeyCommand): Promise<RotateSigningKeyResult> {
    return retryOnConflict(() =>
      this.keys.decideHoldingKey((state) => state.keys.find((k) => k.status === 'active')?.key_id ?? null, (state, now) => rotateSigningKey(state, { kek: this.kek, now })),
    );
  }
}
