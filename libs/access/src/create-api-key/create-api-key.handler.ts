import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { generateApiKey } from '../domain/api-key';
import { createApiKey } from '../domain/organization.aggregate';
import { OrganizationRepository } from '../keys/organization.repository';
import { CreateApiKeyCommand, CreatedApiKey } from './create-api-key.command';

/** Load the organization, let the aggregate decide (it exists, scopes), append the key's hash (never the key). */
@CommandHandler(CreateApiKeyCommand)
export class CreateApiKeyHandler implements ICommandHandler<CreateApiKeyCommand, CreatedApiKey> {
  constructor(private readonly organizations: OrganizationRepository) {}

  async execute(cmd: CreateApiKeyCommand): Promise<CreatedApiKey> {
    const key = generateApiKey(cmd.options.mode);
    const events = createApiKey(await this.organizations.load(cmd.orgId), cmd.orgId, key, cmd.options);
    // Keys do not depend on each other: a new one appends whatever else the organization recorded meanwhile.
    await this.organizations.save(cmd.orgId, events, 'stream_exists');
    const data = events[0].data;
    return { key_id: key.keyId, key: key.secret, org_id: cmd.orgId, scopes: data.scopes, mode: key.mode, expires_at: data.expires_at };
  }
}
