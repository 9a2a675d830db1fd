import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { KEY_ENCRYPTION_KEY } from '@app/core';
import { rotateSigningKey } from '../domain/signing-key-ring.aggregate';
import { SigningKeyRepository } from '../signing-keys/signing-key.repository';
import { RotateSigningKeyCommand, RotateSigningKeyResult } from './rotate-signing-key.command';
import { retryOnConflict } from '@app/event-store';

/** Load the ring → rotate → save at the ring's revision (a lost race decides again); every process reloads. */
@CommandHandler(RotateSigningKeyCommand)
export class RotateSigningKeyHandler implements ICommandHandler<RotateSigningKeyCommand, RotateSigningKeyResult> {
  constructor(
    private readonly keys: SigningKeyRepository,
    @Inject(KEY_ENCRYPTION_KEY) private readonly kek: Buffer,
  ) {}

  execute(cmd: RotateSigningKeyCommand): Promise<RotateSigningKeyResult> {
    return retryOnConflict(async () => {
      const state = await this.keys.load();
      const decision = rotateSigningKey(state, { kek: this.kek, now: cmd.at ?? new Date() });
      await this.keys.save(state, decision);
      return decision.result;
    });
  }
}
