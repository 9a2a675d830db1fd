import type { OrganizationKind } from '../domain/organization.aggregate';

/** Create an organization (`npm run cli -- orgs:create`, the embedded demo organization). */
export class CreateOrganizationCommand {
  constructor(
    readonly name: string,
    readonly kind: OrganizationKind = 'standard',
  ) {}
}
