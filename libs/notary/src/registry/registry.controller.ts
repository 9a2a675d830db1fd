import { Body, Controller, Get, HttpCode, Param, Patch, Post, Query, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { z } from 'zod';
import { AccessContext, Authenticated, Caller, Throttle } from '@app/access';
import { AppError } from '@app/core';
import { apiInput, ApiJsonBody, ApiJsonResponse, ApiPathParams, ApiQueryParams, ZodPipe } from '@app/http';
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
const text = (max: number) => z.string().trim().min(1).max(max);
const tags = z.array(text(40)).max(20);
const registerBody = apiInput(
  'RegisterArtifactRequest',
  z
    .object({
      title: text(200),
      summary: text(2000).nullable().default(null),
      artifact_type: z.enum(ARTIFACT_TYPES),
      industry: text(100).nullable().default(null),
      tags: tags.default([]),
      visibility: z.enum(['public', 'private']).default('private'),
    })
    .strict(),
);
const editBody = apiInput(
  'UpdateRegistryEntryRequest',
  z
    .object({
      title: text(200).optional(),
      summary: text(2000).nullable().optional(),
      industry: text(100).nullable().optional(),
      tags: tags.optional(),
      visibility: z.enum(['public', 'private']).optional(),
    })
    .strict()
    .refine((b) => Object.keys(b).length > 0, { message: 'nothing to change' }),
);
const idParams = z.object({ id: z.uuid({ error: 'must be a registry entry id (uuid)' }) });

@ApiTags('registry')
@Controller('v1/registry')
export class RegistryController {
  constructor(private readonly registry: RegistryService) {}

  @Get()
  @Throttle('registry_list')
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
    // The RegistryPage as JSON text, serialized once and kept with the page (about 30 KB at 50 items).
    const json = await this.registry.listJson(query, caller.principal?.orgId);
    reply.header('content-type', 'application/json; charset=utf-8');
    return json;
  }

  /** Lists an artifact without a certificate (status `unverified`). */
  @Post()
  @HttpCode(201)
  @Authenticated('certificates:write')
  @ApiBearerAuth()
  @ApiOperation({ operationId: 'registerArtifact', summary: 'List an artifact without a certificate (status unverified)' })
  @ApiJsonBody('RegisterArtifactRequest')
  @ApiJsonResponse(201, 'RegistryEntryRef')
  register(@Caller() caller: AccessContext, @Body(new ZodPipe(registerBody)) body: z.infer<typeof registerBody>) {
    return this.registry.register(caller.principal!.orgId, body);
  }

  /** Publishes or edits the caller's entry: title, summary, industry, tags, visibility. */
  @Patch(':id')
  @Authenticated('certificates:write')
  @ApiBearerAuth()
  @ApiOperation({ operationId: 'updateRegistryEntry', summary: 'Publish or edit the caller’s entry: title, summary, industry, tags, visibility' })
  @ApiPathParams(idParams)
  @ApiJsonBody('UpdateRegistryEntryRequest')
  @ApiJsonResponse(200, 'RegistryEntryRef')
  edit(
    @Caller() caller: AccessContext,
    @Param(new ZodPipe(idParams, 'params')) p: z.infer<typeof idParams>,
    @Body(new ZodPipe(editBody)) body: z.infer<typeof editBody>,
  ) {
    return this.registry.edit(caller.principal!.orgId, p.id, body);
  }
}
