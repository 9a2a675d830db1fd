import { randomUUID } from 'node:crypto';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { registerEntry } from '../domain/registry-entry.aggregate';
import { RegistryEntryRepository } from '../registry/registry-entry.repository';
import { RegisterRegistryEntryCommand } from './register-registry-entry.command';

@CommandHandler(RegisterRegistryEntryCommand)
export class RegisterRegistryEntryHandler implements ICommandHandler<RegisterRegistryEntryCommand, { id: string }> {
  constructor(private readonly entries: RegistryEntryRepository) {}

  async execute(cmd: RegisterRegistryEntryCommand): Promise<{ id: string }> {
    const id = randomUUID();
    await this.entries.saveNew(id, registerEntry(id, cmd.orgId, cmd.entry));
    return { id };
  }
}
