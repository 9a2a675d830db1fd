import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { z } from 'zod';
import { AccessContext, Authenticated, Caller } from '@app/access';
import { apiInput, ApiJsonBody, ApiJsonResponse, ZodPipe } from '@app/http';
import { ARTIFACT_TYPES } from '../domain/artifact-types';
import { registryTags as tags, registryText as text } from '../registry/registry-fields';
import { RegisterRegistryEntryCommand } from './register-registry-entry.command';

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

@ApiTags('registry')
@Controller('v1/registry')
export class RegisterRegistryEntryController {
  constructor(private readonly commands: CommandBus) {}

  /** Lists an artifact without a certificate (status `unverified`). */
  @Post()
  @HttpCode(201)
  @Authenticated('certificates:write')
  @ApiBearerAuth()
  @ApiOperation({ operationId: 'registerArtifact', summary: 'List an artifact without a certificate (status unverified)' })
  @ApiJsonBody('RegisterArtifactRequest')
  @ApiJsonResponse(201, 'RegistryEntryRef')
  register(@Caller() caller: AccessContext, @Body(new ZodPipe(registerBody)) body: z.infer<typeof registerBody>) {
    return this.commands.execute<RegisterRegistryEntryCommand, { id: string }>(new RegisterRegistryEntryCommand(caller.principal!.orgId, body));
  }

}
