import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { newPrefixedId } from '@app/core';
import { generateApiKey } from '../domain/api-key';
import { createApiKey, createOrganization, foldOrganization } from '../domain/organization.aggregate';
import { SANDBOX_SCOPES } from '../domain/scopes';
import { OrganizationRepository } from '../keys/organization.repository';
import type { CreatedApiKey } from '../create-api-key/create-api-key.command';
import { CreateSandboxKeyCommand, SANDBOX_KEY_TTL_MS } from './create-sandbox-key.command';

/** A sandbox organization and its one test key with the sandbox scopes (no keys:manage, no users:manage), decided together and opened in one append. */
@CommandHandler(CreateSandboxKeyCommand)
export class CreateSandboxKeyHandler implements ICommandHandler<CreateSandboxKeyCommand, CreatedApiKey> {
  constructor(private readonly organizations: OrganizationRepository) {}

  async execute(cmd: CreateSandboxKeyCommand): Promise<CreatedApiKey> {
    const orgId = newPrefixedId('org', 12);
    const opened = createOrganization(orgId, `sandbox ${cmd.now.toISOString()}`, 'sandbox');
    const key = generateApiKey('test');
    const [created] = createApiKey(foldOrganization(opened), orgId, key, {
      scopes: [...SANDBOX_SCOPES],
      name: 'sandbox',
      expiresAt: new Date(cmd.now.getTime() + SANDBOX_KEY_TTL_MS),
    });
    await this.organizations.save(orgId, [...opened, created], null);
    return { key_id: key.keyId, key: key.secret, org_id: orgId, scopes: created.data.scopes, mode: key.mode, expires_at: created.data.expires_at };
  }
}
