import type { RegistryEntryRegistered } from '../domain/registry-entry.aggregate';

/** List an artifact without a certificate (POST /v1/registry). */
export class RegisterRegistryEntryCommand {
  constructor(
    readonly orgId: string,
    readonly entry: Omit<RegistryEntryRegistered, 'entry_id' | 'org_id'>,
  ) {}
}
