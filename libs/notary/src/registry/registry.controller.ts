import { Controller, Get, Query, Res } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { z } from 'zod';
import { AccessContext, Caller, Throttle } from '@app/access';
import { AppError } from '@app/core';
import { ApiJsonResponse, ApiQueryParams, ZodPipe } from '@app/http';
import '../http/notary.openapi';
import { ARTIFACT_TYPES } from './registry.projection';
import { RegistryService } from './registry.service';

const listQuery = z
  .object({
    status: z.enum(['certified', 'unverified']).optional(),
    artifact_type: z.enum(ARTIFACT_TYPES).optional(),
    industry: z.string().min(1).max(100).optional(),
    q: z.string().min(1).max(200).optional(),
    visibility: z.enum(['public', 'private']).default('public'),
    limit: z.coerce.number().int().min(1).max(200).default(50),
    cursor: z.string().max(300).optional(),
  })
  .strict();
@ApiTags('registry')
@Controller('v1/registry')
export class RegistryController {
  constructor(private readonly registry: RegistryService) {}

  @Get()
  @Throttle('registry_list_window')
  @ApiOperation({ operationId: 'listRegistry', summary: 'The registry, newest first, filtered; visibility=private needs a key and lists its own organization’s entries' })
  @ApiQueryParams(listQuery)
  @ApiJsonResponse(200, 'RegistryPage')
  async list(
    @Caller() caller: AccessContext,
    @Query(new ZodPipe(listQuery, 'query')) query: z.infer<typeof listQuery>,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    if (query.visibility === 'private' && !caller.principal) {
      throw new AppError('auth_required', 'Private entries are listed only to their organization: send a bearer key', 401);
    }
    // The RegistryPage as JSON bytes, serialized once and kept with the page (about 30 KB at 50 items).
    const json = await this.registry.listJson(query, caller.principal?.orgId);
    reply.header('content-type', 'application/json; charset=utf-8');
    return json;
  }
}
