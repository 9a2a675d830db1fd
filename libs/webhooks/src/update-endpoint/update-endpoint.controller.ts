import { Body, Controller, Param, Patch } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { z } from 'zod';
import { AccessContext, Authenticated, Caller } from '@app/access';
import { ApiJsonBody, ApiJsonResponse, ApiPathParams, ZodPipe } from '@app/http';
import { EndpointParams, endpointParams, updateBody } from '../http/webhooks-http';
import { UpdateEndpointCommand } from './update-endpoint.command';

@ApiTags('webhooks')
@ApiBearerAuth()
@Authenticated('webhooks:manage')
@Controller('api/cdp/webhooks')
export class UpdateEndpointController {
  constructor(private readonly commands: CommandBus) {}

  @Patch('endpoints/:id')
  @ApiOperation({ operationId: 'updateWebhookEndpoint', summary: 'Change an endpoint; enabled: true re-enables a disabled one' })
  @ApiPathParams(endpointParams)
  @ApiJsonBody('UpdateWebhookEndpointRequest')
  @ApiJsonResponse(200, 'WebhookEndpoint')
  update(@Caller() c: AccessContext, @Param(new ZodPipe(endpointParams, 'params')) p: EndpointParams, @Body(new ZodPipe(updateBody)) body: z.infer<typeof updateBody>) {
    return this.commands.execute(new UpdateEndpointCommand(c.principal!.orgId, p.id, body));
  }
}
