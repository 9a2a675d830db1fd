import type { RegistryEntryEdited } from '../domain/registry-entry.aggregate';

/** Publish or edit the caller's registry entry (PATCH /v1/registry/{id}). */
export class EditRegistryEntryCommand {
  constructor(
    readonly orgId: string,
    readonly entryId: string,
    readonly changes: Omit<RegistryEntryEdited, 'entry_id'>,
  ) {}
}
