import { Inject, Optional } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { APP_CONFIG, type AppConfig } from '@app/core';
import { retryOnConflict } from '@app/event-store';
import { generateApiKey } from '../domain/api-key';
import { createApiKey, DEFAULT_MAX_ACTIVE_API_KEYS } from '../domain/organization.aggregate';
import { OrganizationRepository } from '../keys/organization.repository';
import { CreateApiKeyCommand, CreatedApiKey } from './create-api-key.command';

/**
 * Load the organization, let the aggregate decide (it exists, scopes, the creating key's bounds,
 * the cap on active keys), append the key's hash (never the key) at the revision loaded: a
 * concurrent change decides again, so the cap holds under races.
 */
@CommandHandler(CreateApiKeyCommand)
export class CreateApiKeyHandler implements ICommandHandler<CreateApiKeyCommand, CreatedApiKey> {
  private readonly maxActiveKeys: number;

  constructor(
    private readonly organizations: OrganizationRepository,
    @Optional() @Inject(APP_CONFIG) config?: Pick<AppConfig, 'MAX_ACTIVE_API_KEYS'> | null,
  ) {
    this.maxActiveKeys = config?.MAX_ACTIVE_API_KEYS ?? DEFAULT_MAX_ACTIVE_API_KEYS;
  }

  async execute(cmd: CreateApiKeyCommand): Promise<CreatedApiKey> {
    const key = generateApiKey(cmd.options.mode);
    const events = await retryOnConflict(async () => {
      const org = await this.organizations.load(cmd.orgId);
      const decided = createApiKey(org, cmd.orgId, key, cmd.options, { now: new Date(), maxActiveKeys: this.maxActiveKeys });
      await this.organizations.save(cmd.orgId, decided, org);
      return decided;
    }, Infinity);
    const data = events[0].data;
    return { key_id: key.keyId, key: key.secret, org_id: cmd.orgId, scopes: data.scopes, mode: key.mode, expires_at: data.expires_at };
  }
}
