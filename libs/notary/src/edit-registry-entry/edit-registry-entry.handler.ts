import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { editEntry } from '../domain/registry-entry.aggregate';
import { RegistryEntryRepository } from '../registry/registry-entry.repository';
import { EditRegistryEntryCommand } from './edit-registry-entry.command';

/** Load the entry (its owner), let the aggregate decide (another organization's is not_found), append the edit. */
@CommandHandler(EditRegistryEntryCommand)
export class EditRegistryEntryHandler implements ICommandHandler<EditRegistryEntryCommand, { id: string }> {
  constructor(private readonly entries: RegistryEntryRepository) {}

  async execute(cmd: EditRegistryEntryCommand): Promise<{ id: string }> {
    const entry = await this.entries.load(cmd.entryId);
    const events = editEntry(entry, cmd.entryId, cmd.orgId, cmd.changes);
    await this.entries.saveEdit(entry!, events);
    return { id: cmd.entryId };
  }
}
