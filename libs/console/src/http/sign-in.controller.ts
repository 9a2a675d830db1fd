import { Body, Controller, Get, HttpCode, Inject, Post, Query, Req, Res, UseFilters } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiExcludeController } from '@nestjs/swagger';
import { randomBytes } from 'node:crypto';
import type { FastifyReply } from 'fastify';
import { APP_CONFIG, AppConfig, DomainError } from '@app/core';
import { sameSecret } from '../domain/secrets';
import { SESSION_TTL_MS } from '../domain/session.aggregate';
import { ConsoleAuth } from '../people/console-auth';
import type { SignedIn } from '../people/open-session';
import { CONSOLE_SCRIPT, CONSOLE_STYLE } from '../pages/assets';
import { signInLinkPage, signInPage } from '../pages/sign-in.pages';
import { TIMELINE_SCRIPT } from '../pages/timeline-script';
import { RedeemSignInLinkCommand } from '../redeem-sign-in-link/redeem-sign-in-link.command';
import { RevokeSessionCommand } from '../revoke-session/revoke-session.command';
import { SignInWithPasswordCommand } from '../sign-in-with-password/sign-in-with-password.command';
import { checkCsrf, ConsolePageFilter, ConsoleRequest, formField, isSecure, redirect, sendPage } from './console-http';
import { clearedCookie, cookie, PRE_SESSION_COOKIE, readCookie, SESSION_COOKIE } from './cookies';
import { sessionTokenOf } from './console-forms';
import { SignInThrottle } from './sign-in-throttle';

/**
 * Signing in and out, and the console's assets. Before a session exists, the sign-in forms are
 * protected by a double-submit token: a random value in a SameSite=Strict cookie and in the form.
 */
@ApiExcludeController()
@Controller('console')
@UseFilters(ConsolePageFilter)
export class SignInController {
  constructor(
    private readonly commands: CommandBus,
    private readonly auth: ConsoleAuth,
    private readonly throttle: SignInThrottle,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get()
  async home(@Req() req: ConsoleRequest, @Res() reply: FastifyReply) {
    const viewer = await this.auth.viewer(sessionTokenOf(this.auth, req));
    redirect(reply, viewer ? '/console/approvals' : '/console/sign-in');
  }

  @Get('assets/console.css')
  style(@Res() reply: FastifyReply) {
    void reply.header('content-type', 'text/css; charset=utf-8').header('cache-control', 'public, max-age=86400').header('x-content-type-options', 'nosniff').send(CONSOLE_STYLE);
  }

  @Get('assets/console.js')
  script(@Res() reply: FastifyReply) {
    void reply.header('content-type', 'text/javascript; charset=utf-8').header('cache-control', 'public, max-age=86400').header('x-content-type-options', 'nosniff').send(CONSOLE_SCRIPT);
  }

  @Get('assets/timeline.js')
  timelineScript(@Res() reply: FastifyReply) {
    void reply.header('content-type', 'text/javascript; charset=utf-8').header('cache-control', 'public, max-age=86400').header('x-content-type-options', 'nosniff').send(TIMELINE_SCRIPT);
  }

  @Get('sign-in')
  signIn(@Req() req: ConsoleRequest, @Res() reply: FastifyReply) {
    sendPage(reply, 200, signInPage(this.preSessionToken(req, reply)));
  }

  @Post('sign-in')
  @HttpCode(200)
  async signInWithPassword(@Req() req: ConsoleRequest, @Res() reply: FastifyReply, @Body() body: unknown) {
    const email = formField(body, 'email');
    if (!this.preSessionValid(req, body)) return sendPage(reply, 403, signInPage(this.preSessionToken(req, reply), { email, error: 'The form expired; try again.' }));
    await this.throttle.admit(req.ip, email);
    try {
      const signedIn = await this.commands.execute<SignInWithPasswordCommand, SignedIn>(new SignInWithPasswordCommand(email, formField(body, 'password')));
      this.startSession(req, reply, signedIn);
    } catch (err) {
      if (!(err instanceof DomainError && err.code === 'sign_in_failed')) throw err;
      await this.throttle.failed(email);
      req.log.info({ event: 'console.sign_in_failed', method: 'password' }, 'console sign-in refused');
      sendPage(reply, 401, signInPage(this.preSessionToken(req, reply), { email, error: 'Wrong email or password.' }));
    }
  }

  @Get('sign-in/link')
  signInLink(@Req() req: ConsoleRequest, @Res() reply: FastifyReply, @Query('token') token: unknown) {
    sendPage(reply, 200, signInLinkPage(typeof token === 'string' ? token.slice(0, 100) : '', this.preSessionToken(req, reply)));
  }

  @Post('sign-in/link')
  @HttpCode(200)
  async redeemLink(@Req() req: ConsoleRequest, @Res() reply: FastifyReply, @Body() body: unknown) {
    const token = formField(body, 'token').slice(0, 100);
    if (!this.preSessionValid(req, body)) return sendPage(reply, 403, signInLinkPage(token, this.preSessionToken(req, reply), 'The form expired; press the button again.'));
    await this.throttle.admit(req.ip);
    try {
      this.startSession(req, reply, await this.commands.execute<RedeemSignInLinkCommand, SignedIn>(new RedeemSignInLinkCommand(token)));
    } catch (err) {
      if (!(err instanceof DomainError && err.code === 'sign_in_failed')) throw err;
      sendPage(reply, 401, signInLinkPage(token, this.preSessionToken(req, reply), err.message));
    }
  }

  @Post('sign-out')
  @HttpCode(200)
  async signOut(@Req() req: ConsoleRequest, @Res() reply: FastifyReply, @Body() body: unknown) {
    const viewer = await this.auth.viewer(sessionTokenOf(this.auth, req));
    if (viewer) {
      checkCsrf(viewer.csrf, body);
      await this.commands.execute(new RevokeSessionCommand(viewer.session.session_id, { reason: 'signed_out', by: `user:${viewer.user.user_id}` }));
    }
    void reply.header('set-cookie', clearedCookie(SESSION_COOKIE, isSecure(req, this.config.BASE_URL)));
    redirect(reply, '/console/sign-in');
  }

  private startSession(req: ConsoleRequest, reply: FastifyReply, s: SignedIn) {
    const secure = isSecure(req, this.config.BASE_URL);
    void reply.header('set-cookie', [cookie(SESSION_COOKIE, s.session_token, { secure, maxAgeSeconds: SESSION_TTL_MS / 1000 }), clearedCookie(PRE_SESSION_COOKIE, secure)]);
    req.log.info({ event: 'console.signed_in', user_id: s.user.user_id, session_id: s.session.session_id, method: s.session.method }, 'console sign-in');
    redirect(reply, '/console/approvals');
  }

  /** The sign-in forms' token: the cookie's, or a new one set now. */
  private preSessionToken(req: ConsoleRequest, reply: FastifyReply): string {
    const existing = readCookie(req.headers.cookie, PRE_SESSION_COOKIE, isSecure(req, this.config.BASE_URL));
    if (existing && /^[0-9a-f]{32}$/.test(existing)) return existing;
    const token = randomBytes(16).toString('hex');
    void reply.header('set-cookie', cookie(PRE_SESSION_COOKIE, token, { secure: isSecure(req, this.config.BASE_URL), maxAgeSeconds: 3600 }));
    return token;
  }

  private preSessionValid(req: ConsoleRequest, body: unknown): boolean {
    const expected = readCookie(req.headers.cookie, PRE_SESSION_COOKIE, isSecure(req, this.config.BASE_URL));
    const presented = formField(body, 'csrf');
    return Boolean(expected && presented && sameSecret(presented, expected));
  }
}
