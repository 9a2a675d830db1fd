import { Inject, Injectable } from '@nestjs/common';
import { EventsHandler, IEventHandler } from '@nestjs/cqrs';
import { DemoOrganizationCreated } from '@app/access';
import { APP_CONFIG, AppConfig, LOGGER } from '@app/core';
import type { Logger } from '@app/http';
import { FIRST_OWNER_LINK_TTL_MS } from '../domain/session.aggregate';
import { InviteUserCommand } from '../invite-user/invite-user.command';
import { InviteUserHandler } from '../invite-user/invite-user.handler';
import { signInUrl } from '../issue-sign-in-link/issue-sign-in-link.command';

export const DEMO_OWNER_EMAIL = 'owner@demo.sigil.invalid';

/**
 * Embedded mode's first start: the demo organization gets an owner, and their one-time sign-in
 * link is printed beside the demo key (valid 24 hours), so the console opens straight away. That
 * print stands in for an email; the structured log records the link's issue without its URL.
 */
@Injectable()
@EventsHandler(DemoOrganizationCreated)
export class FirstOwner implements IEventHandler<DemoOrganizationCreated> {
  constructor(
    private readonly invite: InviteUserHandler,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  async handle(event: DemoOrganizationCreated): Promise<void> {
    try {
      const link = await this.invite.execute(new InviteUserCommand(event.orgId, { email: DEMO_OWNER_EMAIL, displayName: 'Demo owner', role: 'owner' }, { kind: 'operator' }, FIRST_OWNER_LINK_TTL_MS));
      const url = signInUrl(this.config.BASE_URL, link.token);
      this.logger.info({ event: 'console.sign_in_link', link_id: link.link_id, user_id: link.user.user_id, expires_at: link.expires_at }, 'console sign-in link issued (printed once above)');
      process.stderr.write(`Console: ${this.config.BASE_URL}/console — sign in as the demo owner (${DEMO_OWNER_EMAIL}) with this one-time link (until ${link.expires_at}):\n\n  ${url}\n\n`);
    } catch (err) {
      this.logger.error({ err }, 'could not create the demo organization’s owner');
    }
  }
}
