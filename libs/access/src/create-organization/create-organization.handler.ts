import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { newPrefixedId } from '@app/core';
import { createOrganization } from '../domain/organization.aggregate';
import type { Organization } from '../keys/access-queries';
import { OrganizationRepository } from '../keys/organization.repository';
import { CreateOrganizationCommand } from './create-organization.command';

/** A new organization: nothing to load; the aggregate decides (the name); its stream opens. */
@CommandHandler(CreateOrganizationCommand)
export class CreateOrganizationHandler implements ICommandHandler<CreateOrganizationCommand, Organization> {
  constructor(private readonly organizations: OrganizationRepository) {}

  async execute(cmd: CreateOrganizationCommand): Promise<Organization> {
    const orgId = newPrefixedId('org', 12);
    const events = createOrganization(orgId, cmd.name, cmd.kind);
    const saved = await this.organizations.save(orgId, events, null);
    const { name, kind } = events[0].data;
    // The read model's created_at is the event's recorded_at.
    return { org_id: orgId, name, kind, created_at: saved.events[0].recorded_at };
  }
}
