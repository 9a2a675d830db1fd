import { Controller, Delete, HttpCode, Param } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { z } from 'zod';
import { ApiJsonResponse, ApiPathParams, ZodPipe } from '@app/http';
import { AccessContext, Authenticated, Caller } from '../http/access-context';
import type { ApiKeyView } from '../keys/access-queries';
import { RevokeApiKeyCommand } from './revoke-api-key.command';

const keyIdParams = z.object({ key_id: z.string().regex(/^key_[0-9a-f]{16}$/, 'must look like key_<16 hex>') });

@ApiTags('access')
@ApiBearerAuth()
@Controller('api')
export class RevokeApiKeyController {
  constructor(private readonly commands: CommandBus) {}

  /**
   * Revoked at once on every process; another organization's key is 404; revoking again changes
   * nothing. Only keys whose scopes the caller holds all of (403 insufficient_scope); never the
   * organization's last active keys:manage key (409 last_key_manager).
   */
  @Delete('keys/:key_id')
  @HttpCode(200)
  @Authenticated('keys:manage')
  @ApiOperation({ operationId: 'revokeApiKey', summary: 'Revoke a key of the caller’s organization at once (revoking again changes nothing)' })
  @ApiPathParams(keyIdParams)
  @ApiJsonResponse(200, 'ApiKey')
  revoke(@Caller() caller: AccessContext, @Param(new ZodPipe(keyIdParams, 'params')) p: z.infer<typeof keyIdParams>) {
    return this.commands.execute<RevokeApiKeyCommand, ApiKeyView>(new RevokeApiKeyCommand(p.key_id, { orgId: caller.principal!.orgId, reason: `revoked by ${caller.principal!.keyId}`, revokedBy: caller.principal!.keyId }));
  }
}
