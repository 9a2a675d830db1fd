import { Body, Controller, Param, Patch } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { z } from 'zod';
import { AccessContext, Authenticated, Caller } from '@app/access';
import { apiInput, ApiJsonBody, ApiJsonResponse, ApiPathParams, ZodPipe } from '@app/http';
import { registryTags as tags, registryText as text } from '../registry/registry-fields';
import { EditRegistryEntryCommand } from './edit-registry-entry.command';

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
export class EditRegistryEntryController {
  constructor(private readonly commands: CommandBus) {}

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
    return this.commands.execute<EditRegistryEntryCommand, { id: string }>(new EditRegistryEntryCommand(caller.principal!.orgId, p.id, body));
  }
}
