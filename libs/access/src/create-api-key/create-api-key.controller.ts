import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiBody, ApiOperation, ApiTags } from '@nestjs/swagger';
import { z } from 'zod';
import { AppError } from '@app/core';
import { apiInput, ApiJsonResponse, schemaRef, ZodPipe } from '@app/http';
import { SCOPES, scopesBeyond } from '../domain/scopes';
import { AccessContext, Authenticated, Caller } from '../http/access-context';
import { CreateApiKeyCommand, CreatedApiKey } from './create-api-key.command';
import '../http/access.openapi';

const createKeyBody = apiInput(
  'CreateApiKeyRequest',
  z.strictObject({
    scopes: z.array(z.enum(SCOPES)).min(1).max(SCOPES.length).describe('at most the scopes of the calling key'),
    mode: z.enum(['test', 'live']),
    name: z.string().trim().min(1).max(200).optional(),
    owner: z.string().trim().min(1).max(200).optional().describe('who holds the key (for separation of duties between requesters and reviewers)'),
    expires_at: z
      .string()
      .refine((v) => !Number.isNaN(Date.parse(v)) && /^\d{4}-\d{2}-\d{2}T/.test(v) && Date.parse(v) > Date.now(), 'must be an ISO-8601 date-time in the future')
      .optional(),
  }),
);

/** The caller grants only scopes it holds: a keys:manage key cannot mint a stronger one. */
export function checkGrantable(callerScopes: readonly string[], requested: CreateApiKeyCommand['options']['scopes']): void {
  const beyond = scopesBeyond(callerScopes, requested);
  if (beyond.length) throw new AppError('insufficient_scope', `A key can only be given scopes its creator holds; missing: ${beyond.join(', ')}`, 403, { missing_scopes: beyond });
}

@ApiTags('access')
@ApiBearerAuth()
@Controller('api')
export class CreateApiKeyController {
  constructor(private readonly commands: CommandBus) {}

  @Post('keys')
  @HttpCode(201)
  @Authenticated('keys:manage')
  @ApiOperation({ operationId: 'createApiKey', summary: 'Create an API key of the caller’s organization (the secret is in this answer only)' })
  @ApiBody({ required: true, schema: schemaRef('CreateApiKeyRequest') })
  @ApiJsonResponse(201, 'CreatedApiKey')
  async create(@Caller() caller: AccessContext, @Body(new ZodPipe(createKeyBody)) body: z.infer<typeof createKeyBody>) {
    const p = caller.principal!;
    checkGrantable(p.scopes, body.scopes);
    const options = { scopes: body.scopes, mode: body.mode, name: body.name ?? null, owner: body.owner ?? null, expiresAt: body.expires_at ? new Date(body.expires_at) : null, createdBy: p.keyId };
    const created = await this.commands.execute<CreateApiKeyCommand, CreatedApiKey>(new CreateApiKeyCommand(p.orgId, options));
    return { ...created, name: options.name, owner: options.owner };
  }
}
