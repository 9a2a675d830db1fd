import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { AppError } from '@app/core';
import { retryOnConflict } from '@app/event-store';
import { revokeApiKey } from '../domain/organization.aggregate';
import { AccessQueries, apiKeyView, ApiKeyView } from '../keys/access-queries';
import { OrganizationRepository } from '../keys/organization.repository';
import { RevokeApiKeyCommand } from './revoke-api-key.command';

/**
 * Find the key's organization (read model), load it, let the aggregate decide (revoking twice
 * records nothing), append at the revision loaded; a race decides again. Answers the key's view.
 */
@CommandHandler(RevokeApiKeyCommand)
export class RevokeApiKeyHandler implements ICommandHandler<RevokeApiKeyCommand, ApiKeyView> {
  constructor(
    private readonly organizations: OrganizationRepository,
    private readonly reads: AccessQueries,
  ) {}

  async execute(cmd: RevokeApiKeyCommand): Promise<ApiKeyView> {
    const orgId = (await this.keyOf(cmd.keyId, cmd.options.orgId)).org_id;
    // The organization changed meanwhile: decide again (revoking twice records nothing).
    await retryOnConflict(async () => {
      const org = await this.organizations.load(orgId);
      const events = revokeApiKey(org!, cmd.keyId, cmd.options.reason ?? null, { revokedBy: cmd.options.revokedBy ?? null, now: new Date() });
      if (events.length > 0) await this.organizations.save(orgId, events, org);
    }, Infinity);
    return apiKeyView(await this.keyOf(cmd.keyId), new Date());
  }

  /** Another organization's key answers exactly as a missing one: 404. */
  private async keyOf(keyId: string, orgId?: string) {
    const row = await this.reads.key(keyId);
    if (!row || (orgId !== undefined && row.org_id !== orgId)) throw new AppError('not_found', `key ${keyId} not found`, 404);
    return row;
  }
}
