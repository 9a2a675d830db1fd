import { Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { CommandBus, EventBus } from '@nestjs/cqrs';
import { APP_CONFIG, AppConfig, LOGGER } from '@app/core';
import type { Logger } from '@app/http';
import { Scope, SCOPES } from '../domain/scopes';
import { CreateApiKeyCommand, CreatedApiKey } from '../create-api-key/create-api-key.command';
import { CreateOrganizationCommand } from '../create-organization/create-organization.command';
import { AccessQueries, Organization } from '../keys/access-queries';

/** Published (in process) once the demo organization exists: the console gives it an owner and prints their sign-in link. */
export class DemoOrganizationCreated {
  constructor(readonly orgId: string) {}
}

/**
 * Embedded mode's first start: a demo organization and one test key with every scope, printed
 * once, so a newcomer can call every endpoint straight away. Never with PostgreSQL.
 */
@Injectable()
export class DemoOrganization implements OnApplicationBootstrap {
  constructor(
    private readonly commands: CommandBus,
    private readonly events: EventBus,
    private readonly reads: AccessQueries,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (this.config.storeMode !== 'embedded' || (await this.reads.countOrganizations()) > 0) return;
    const org = await this.commands.execute<CreateOrganizationCommand, Organization>(new CreateOrganizationCommand('Demo', 'demo'));
    const key = await this.commands.execute<CreateApiKeyCommand, CreatedApiKey>(
      new CreateApiKeyCommand(org.org_id, { scopes: [...SCOPES] as Scope[], mode: 'test', name: 'demo' }),
    );
    this.logger.info({ org_id: org.org_id, key_id: key.key_id }, 'demo organization created');
    process.stderr.write(
      `\nFirst start: created the demo organization ${org.org_id} and a test key with every scope.\n` +
        `It is shown this once; keep it:\n\n  ${key.key}\n\n` +
        `  curl -H "Authorization: Bearer ${key.key}" ${this.config.BASE_URL}/api/me\n\n`,
    );
    this.events.publish(new DemoOrganizationCreated(org.org_id));
  }
}
