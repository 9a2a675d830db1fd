import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Patch, Post, Query } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiBody, ApiOperation, ApiTags } from '@nestjs/swagger';
import { z } from 'zod';
import { AccessContext, Authenticated, Caller } from '@app/access';
import { APP_CONFIG, AppConfig, DomainError, LOGGER } from '@app/core';
import { ApiJsonResponse, ApiPathParams, ApiQueryParams, Logger, schemaRef, ZodPipe } from '@app/http';
import type { UserActor } from '../domain/user.aggregate';
import { ChangeUserRoleCommand } from '../change-user-role/change-user-role.command';
import { DeactivateUserCommand } from '../deactivate-user/deactivate-user.command';
import { InviteUserCommand } from '../invite-user/invite-user.command';
import { IssueSignInLinkCommand, IssuedSignInLink, signInUrl } from '../issue-sign-in-link/issue-sign-in-link.command';
import { ConsoleQueries, sessionView, userView } from '../people/console-queries';
import { RevokeSessionCommand } from '../revoke-session/revoke-session.command';
import { changeUserBody, inviteUserBody } from './people.openapi';

const userParams = z.object({ user_id: z.string().regex(/^usr_[0-9a-f]{24}$/, 'must be a user id: usr_ followed by 24 hex digits') });
const sessionParams = z.object({ session_id: z.string().regex(/^ses_[0-9a-f]{24}$/, 'must be a session id: ses_ followed by 24 hex digits') });
const sessionsQuery = z.strictObject({ user_id: userParams.shape.user_id.optional() });
const keyActor = (caller: AccessContext): UserActor => ({ kind: 'api_key', keyId: caller.principal!.keyId, scopes: caller.principal!.scopes });

/** People of the caller's organization and their console sessions, for keys holding users:manage. */
@ApiTags('people')
@ApiBearerAuth()
@Controller('api')
export class PeopleController {
  constructor(
    private readonly commands: CommandBus,
    private readonly reads: ConsoleQueries,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  @Get('users')
  @Authenticated('users:manage')
  @ApiOperation({ operationId: 'listUsers', summary: 'The people of the caller’s organization' })
  @ApiJsonResponse(200, 'UserList')
  async list(@Caller() caller: AccessContext) {
    return { users: (await this.reads.usersOf(caller.principal!.orgId)).map(userView) };
  }

  @Post('users')
  @Authenticated('users:manage')
  @ApiOperation({ operationId: 'inviteUser', summary: 'Invite a person: the user, and their first one-time sign-in link, in this answer only (the caller forwards it)' })
  @ApiBody({ required: true, schema: schemaRef('InviteUserRequest') })
  @ApiJsonResponse(201, 'SignInLink')
  async invite(@Caller() caller: AccessContext, @Body(new ZodPipe(inviteUserBody)) body: z.infer<typeof inviteUserBody>) {
    const cmd = new InviteUserCommand(caller.principal!.orgId, { email: body.email, displayName: body.display_name, role: body.role }, keyActor(caller));
    return this.link(await this.commands.execute<InviteUserCommand, IssuedSignInLink>(cmd));
  }

  @Get('users/:user_id')
  @Authenticated('users:manage')
  @ApiOperation({ operationId: 'getUser', summary: 'One person of the caller’s organization' })
  @ApiPathParams(userParams)
  @ApiJsonResponse(200, 'User')
  async get(@Caller() caller: AccessContext, @Param(new ZodPipe(userParams, 'params')) p: z.infer<typeof userParams>) {
    const row = await this.reads.user(p.user_id);
    if (!row || row.org_id !== caller.principal!.orgId) throw new DomainError('not_found', `user ${p.user_id} not found`);
    return userView(row);
  }

  @Patch('users/:user_id')
  @Authenticated('users:manage')
  @ApiOperation({ operationId: 'changeUser', summary: 'Change a person’s role (an owner’s, or to owner, only by an owner in the console or the CLI)' })
  @ApiPathParams(userParams)
  @ApiBody({ required: true, schema: schemaRef('ChangeUserRequest') })
  @ApiJsonResponse(200, 'User')
  change(@Caller() caller: AccessContext, @Param(new ZodPipe(userParams, 'params')) p: z.infer<typeof userParams>, @Body(new ZodPipe(changeUserBody)) body: z.infer<typeof changeUserBody>) {
    return this.commands.execute(new ChangeUserRoleCommand(caller.principal!.orgId, p.user_id, body.role, keyActor(caller)));
  }

  @Post('users/:user_id/sign-in-links')
  @Authenticated('users:manage')
  @ApiOperation({
    operationId: 'createSignInLink',
    summary: 'A new one-time sign-in link, sent to the person (the server log stands in for email); the answer has no url. An owner’s only by an owner (keys: 403 owner_role_required)',
  })
  @ApiPathParams(userParams)
  @ApiJsonResponse(201, 'SignInLink')
  async signInLink(@Caller() caller: AccessContext, @Param(new ZodPipe(userParams, 'params')) p: z.infer<typeof userParams>) {
    return this.link(await this.commands.execute<IssueSignInLinkCommand, IssuedSignInLink>(new IssueSignInLinkCommand(caller.principal!.orgId, p.user_id, keyActor(caller))));
  }

  @Post('users/:user_id/deactivate')
  @HttpCode(200)
  @Authenticated('users:manage')
  @ApiOperation({
    operationId: 'deactivateUser',
    summary: 'Deactivate a person: they sign in no more and their sessions end at once (again: no change). Not an owner (keys: 403 owner_role_required), not the last owner (409 last_owner)',
  })
  @ApiPathParams(userParams)
  @ApiJsonResponse(200, 'User')
  deactivate(@Caller() caller: AccessContext, @Param(new ZodPipe(userParams, 'params')) p: z.infer<typeof userParams>) {
    return this.commands.execute(new DeactivateUserCommand(caller.principal!.orgId, p.user_id, keyActor(caller)));
  }

  @Get('sessions')
  @Authenticated('users:manage')
  @ApiOperation({ operationId: 'listSessions', summary: 'Console sessions of the organization (newest first, at most 200), or of one person' })
  @ApiQueryParams(sessionsQuery)
  @ApiJsonResponse(200, 'SessionList')
  async sessions(@Caller() caller: AccessContext, @Query(new ZodPipe(sessionsQuery, 'query')) q: z.infer<typeof sessionsQuery>) {
    const now = new Date();
    return { sessions: (await this.reads.sessionsOf(caller.principal!.orgId, q.user_id)).map((s) => sessionView(s, now)) };
  }

  @Delete('sessions/:session_id')
  @HttpCode(200)
  @Authenticated('users:manage')
  @ApiOperation({ operationId: 'revokeSession', summary: 'Revoke a console session at once (revoking again changes nothing)' })
  @ApiPathParams(sessionParams)
  @ApiJsonResponse(200, 'Session')
  revoke(@Caller() caller: AccessContext, @Param(new ZodPipe(sessionParams, 'params')) p: z.infer<typeof sessionParams>) {
    return this.commands.execute(new RevokeSessionCommand(p.session_id, { orgId: caller.principal!.orgId, reason: 'revoked', by: `api_key:${caller.principal!.keyId}` }));
  }

  /**
   * A link for the caller (a new account's first, or the operator's) is in the answer only; a link
   * for someone else goes to that person alone: the server's log stands in for the email.
   */
  private link(issued: IssuedSignInLink) {
    const url = signInUrl(this.config.BASE_URL, issued.token);
    const answer = { link_id: issued.link_id, delivered_to: issued.delivered_to, expires_at: issued.expires_at, user: issued.user };
    const logged = { event: 'console.sign_in_link', link_id: issued.link_id, user_id: issued.user.user_id, delivered_to: issued.delivered_to, expires_at: issued.expires_at };
    if (issued.delivered_to === 'issuer') {
      this.logger.info(logged, 'console sign-in link issued (in the answer)');
      return { ...answer, url };
    }
    this.logger.info({ ...logged, email: issued.user.email, url }, 'console sign-in link for the person (this log stands in for an email to them)');
    return answer;
  }
}
