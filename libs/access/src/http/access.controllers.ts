import { Controller, Get, Param } from '@nestjs/common';
import { ApiBearerAuth, ApiHeader, ApiOperation, ApiTags } from '@nestjs/swagger';
import { z } from 'zod';
import { ApiJsonResponse, ApiPathParams, ZodPipe } from '@app/http';
import { AccessService } from '../keys/access.service';
import { AccessContext, Authenticated, Caller, LaneAware } from './access-context';
import { QuotaService } from './quota.service';
import './access.openapi';

const keyIdParams = z.object({ key_id: z.string().regex(/^key_[0-9a-f]{16}$/, 'must look like key_<16 hex>') });

@ApiTags('access')
@Controller('api/agents/me')
export class QuotaController {
  constructor(private readonly quota: QuotaService) {}

  /** The caller's lane and buckets. Never throttled, never counts. */
  @Get('quota')
  @LaneAware()
  @ApiHeader({ name: 'X-Agent-DID', required: false, description: 'did:cd:agent:<id>' })
  @ApiOperation({ operationId: 'getQuota', summary: 'The caller’s lane and buckets (service.quota.v1); never throttled' })
  @ApiJsonResponse(200, 'QuotaState')
  quotaState(@Caller() caller: AccessContext) {
    return this.quota.state(caller);
  }
}

@ApiTags('access')
@ApiBearerAuth()
@Controller('api')
export class KeysController {
  constructor(private readonly access: AccessService) {}

  /** The calling key: its organization, scopes and mode. */
  @Get('me')
  @Authenticated()
  @ApiOperation({ operationId: 'getMe', summary: 'The calling key: its organization, scopes and mode' })
  @ApiJsonResponse(200, 'Caller')
  me(@Caller() caller: AccessContext) {
    const p = caller.principal!;
    return { org_id: p.orgId, key_id: p.keyId, scopes: p.scopes, mode: p.mode, lane: caller.lane };
  }

  /** The keys of the caller's organization; never secrets. */
  @Get('keys')
  @Authenticated()
  @ApiOperation({ operationId: 'listApiKeys', summary: 'The keys of the caller’s organization (never secrets)' })
  @ApiJsonResponse(200, 'ApiKeyList')
  async list(@Caller() caller: AccessContext) {
    return { keys: await this.access.listApiKeys(caller.principal!.orgId) };
  }

  @Get('keys/:key_id')
  @Authenticated()
  @ApiOperation({ operationId: 'getApiKey', summary: 'One key of the caller’s organization' })
  @ApiPathParams(keyIdParams)
  @ApiJsonResponse(200, 'ApiKey')
  get(@Caller() caller: AccessContext, @Param(new ZodPipe(keyIdParams, 'params')) params: z.infer<typeof keyIdParams>) {
    return this.access.getApiKey(params.key_id, caller.principal!.orgId);
  }
}
