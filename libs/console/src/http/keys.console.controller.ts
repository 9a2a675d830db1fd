import { Body, Controller, Get, HttpCode, Param, Post, Query, Req, Res, UseFilters } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { AccessService, checkGrantable, CreateApiKeyCommand, CreatedApiKey, RevokeApiKeyCommand, SCOPES } from '@app/access';
import { AppError } from '@app/core';
import { SigningKeyStore } from '@app/notary';
import { ConsoleAuth, ConsoleViewer } from '../people/console-auth';
import { keysPage, scopeField } from '../pages/keys.page';
import { checkCsrf, ConsolePageFilter, ConsoleRequest, formField, redirect, requireScope, sendPage } from './console-http';
import { flashOf, signedIn } from './console-forms';


/** The organization's API keys (keys:manage): create (the secret shown once, on the answer page), list, revoke at once. */
@ApiExcludeController()
@Controller('console/keys')
@UseFilters(ConsolePageFilter)
export class KeysConsoleController {
  constructor(
    private readonly commands: CommandBus,
    private readonly auth: ConsoleAuth,
    private readonly access: AccessService,
    private readonly keyStore: SigningKeyStore,
  ) {}

  @Get()
  async list(@Req() req: ConsoleRequest, @Res() reply: FastifyReply, @Query('done') done: unknown) {
    const viewer = await this.viewer(req, reply);
    if (!viewer) return;
    sendPage(reply, 200, keysPage(viewer, await this.access.listApiKeys(viewer.user.org_id), { flash: flashOf(done, { revoked: 'The key is revoked: the API refuses it from now on.' }), signingKeys: this.keyStore.list() }));
  }

  @Post()
  @HttpCode(201)
  async create(@Req() req: ConsoleRequest, @Res() reply: FastifyReply, @Body() body: unknown) {
    const viewer = await this.viewer(req, reply);
    if (!viewer) return;
    checkCsrf(viewer.csrf, body);
    const scopes = SCOPES.filter((s) => formField(body, scopeField(s)) === 'on');
    const mode = formField(body, 'mode');
    if (scopes.length === 0 || (mode !== 'test' && mode !== 'live')) {
      throw new AppError('validation_failed', 'Choose test or live, and at least one scope', 400, [{ field: 'scope', message: 'choose at least one scope' }]);
    }
    checkGrantable(viewer.scopes, scopes);
    const [name, owner] = [formField(body, 'name').trim().slice(0, 200) || null, formField(body, 'owner').trim().slice(0, 200) || null];
    const created = await this.commands.execute<CreateApiKeyCommand, CreatedApiKey>(new CreateApiKeyCommand(viewer.user.org_id, { scopes, mode, name, owner, createdBy: `user:${viewer.user.user_id}` }));
    req.log.info({ event: 'console.key_created', user_id: viewer.user.user_id, key_id: created.key_id }, 'console key created');
    sendPage(reply, 201, keysPage(viewer, await this.access.listApiKeys(viewer.user.org_id), { created, signingKeys: this.keyStore.list() }));
  }

  @Post(':key_id/revoke')
  @HttpCode(200)
  async revoke(@Req() req: ConsoleRequest, @Res() reply: FastifyReply, @Param('key_id') keyId: string, @Body() body: unknown) {
    const viewer = await this.viewer(req, reply);
    if (!viewer) return;
    checkCsrf(viewer.csrf, body);
    // A malformed id, an unknown one and another organization's are the same 404 page.
    if (!/^key_[0-9a-f]{16}$/.test(keyId)) throw new AppError('not_found', 'not found', 404);
    await this.commands.execute(new RevokeApiKeyCommand(keyId, { orgId: viewer.user.org_id, reason: 'revoked in the console', revokedBy: `user:${viewer.user.user_id}` }));
    redirect(reply, '/console/keys?done=revoked');
  }

  private async viewer(req: ConsoleRequest, reply: FastifyReply): Promise<ConsoleViewer | null> {
    const viewer = await signedIn(this.auth, req, reply);
    if (viewer) requireScope(viewer, 'keys:manage');
    return viewer;
  }
}
