import { Body, Controller, Get, HttpCode, Inject, Param, Post, Query, Req, Res, UseFilters } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { APP_CONFIG, AppConfig, AppError, LOGGER } from '@app/core';
import type { Logger } from '@app/http';
import type { UserActor } from '../domain/user.aggregate';
import { ChangeUserRoleCommand } from '../change-user-role/change-user-role.command';
import { DeactivateUserCommand } from '../deactivate-user/deactivate-user.command';
import { InviteUserCommand } from '../invite-user/invite-user.command';
import { IssuedSignInLink, signInUrl } from '../issue-sign-in-link/issue-sign-in-link.command';
import { ConsoleAuth, ConsoleViewer } from '../people/console-auth';
import { ConsoleQueries, sessionView, userView } from '../people/console-queries';
import { peoplePage } from '../pages/people.page';
import { RevokeSessionCommand } from '../revoke-session/revoke-session.command';
import { checkCsrf, ConsolePageFilter, ConsoleRequest, formField, redirect, requireScope, sendPage } from './console-http';
import { flashOf, signedIn } from './console-forms';

const actorOf = (v: ConsoleViewer): UserActor => ({ kind: 'user', userId: v.user.user_id, role: v.user.role });
const notFound = () => new AppError('not_found', 'not found', 404);

/** The organization's people (users:manage), through the same commands as /api/users and /api/sessions. */
@ApiExcludeController()
@Controller('console/people')
@UseFilters(ConsolePageFilter)
export class PeopleConsoleController {
  constructor(
    private readonly commands: CommandBus,
    private readonly auth: ConsoleAuth,
    private readonly reads: ConsoleQueries,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  @Get()
  async list(@Req() req: ConsoleRequest, @Res() reply: FastifyReply, @Query('done') done: unknown) {
    const viewer = await this.viewer(req, reply);
    if (!viewer) return;
    sendPage(reply, 200, await this.page(viewer, { flash: flashOf(done, { role: 'The role is changed; it applies at once.', revoked: 'The session is ended.', deactivated: 'The person is deactivated: they cannot sign in, and their sessions are ended.' }) }));
  }

  @Post()
  @HttpCode(201)
  async invite(@Req() req: ConsoleRequest, @Res() reply: FastifyReply, @Body() body: unknown) {
    const viewer = await this.viewer(req, reply);
    if (!viewer) return;
    checkCsrf(viewer.csrf, body);
    const input = { email: formField(body, 'email'), displayName: formField(body, 'display_name'), role: formField(body, 'role') };
    const issued = await this.commands.execute<InviteUserCommand, IssuedSignInLink>(new InviteUserCommand(viewer.user.org_id, input, actorOf(viewer)));
    // A new account's first link goes to its inviter (shown on this page once), and nowhere else.
    const url = signInUrl(this.config.BASE_URL, issued.token);
    this.logger.info({ event: 'console.sign_in_link', link_id: issued.link_id, user_id: issued.user.user_id, delivered_to: issued.delivered_to, expires_at: issued.expires_at }, 'console sign-in link issued');
    sendPage(reply, 201, await this.page(viewer, { invited: { url, email: issued.user.email } }));
  }

  @Post(':user_id/role')
  @HttpCode(200)
  async role(@Req() req: ConsoleRequest, @Res() reply: FastifyReply, @Param('user_id') userId: string, @Body() body: unknown) {
    const viewer = await this.viewer(req, reply);
    if (!viewer) return;
    checkCsrf(viewer.csrf, body);
    if (!/^usr_[0-9a-f]{24}$/.test(userId)) throw notFound();
    await this.commands.execute(new ChangeUserRoleCommand(viewer.user.org_id, userId, formField(body, 'role'), actorOf(viewer)));
    redirect(reply, '/console/people?done=role');
  }

  @Post(':user_id/deactivate')
  @HttpCode(200)
  async deactivate(@Req() req: ConsoleRequest, @Res() reply: FastifyReply, @Param('user_id') userId: string, @Body() body: unknown) {
    const viewer = await this.viewer(req, reply);
    if (!viewer) return;
    checkCsrf(viewer.csrf, body);
    if (!/^usr_[0-9a-f]{24}$/.test(userId)) throw notFound();
    await this.commands.execute(new DeactivateUserCommand(viewer.user.org_id, userId, actorOf(viewer)));
    redirect(reply, '/console/people?done=deactivated');
  }

  @Post('sessions/:session_id/revoke')
  @HttpCode(200)
  async revoke(@Req() req: ConsoleRequest, @Res() reply: FastifyReply, @Param('session_id') sessionId: string, @Body() body: unknown) {
    const viewer = await this.viewer(req, reply);
    if (!viewer) return;
    checkCsrf(viewer.csrf, body);
    if (!/^ses_[0-9a-f]{24}$/.test(sessionId)) throw notFound();
    await this.commands.execute(new RevokeSessionCommand(sessionId, { orgId: viewer.user.org_id, reason: 'revoked', by: `user:${viewer.user.user_id}` }));
    redirect(reply, '/console/people?done=revoked');
  }

  private async page(viewer: ConsoleViewer, options: Parameters<typeof peoplePage>[3]) {
    const now = new Date();
    const [users, sessions] = await Promise.all([this.reads.usersOf(viewer.user.org_id), this.reads.sessionsOf(viewer.user.org_id)]);
    return peoplePage(viewer, users.map(userView), sessions.map((s) => sessionView(s, now)), options);
  }

  private async viewer(req: ConsoleRequest, reply: FastifyReply): Promise<ConsoleViewer | null> {
    const viewer = await signedIn(this.auth, req, reply);
    if (viewer) requireScope(viewer, 'users:manage');
    return viewer;
  }
}
