import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { z } from 'zod';
import { AccessContext, Authenticated, Caller } from '@app/access';
import { ApiJsonBody, ApiJsonResponse, ZodPipe } from '@app/http';
import { createBody } from '../http/webhooks-http';
import { CreateEndpointCommand } from './create-endpoint.command';

@ApiTags('webhooks')
@ApiBearerAuth()
@Authenticated('webhooks:manage')
@Controller('api/cdp/webhooks')
export class CreateEndpointController {
  constructor(private readonly commands: CommandBus) {}

  @Post('endpoints')
  @HttpCode(201)
  @ApiOperation({ operationId: 'createWebhookEndpoint', summary: 'Register an endpoint; its signing secret is returned once, here' })
  @ApiJsonBody('CreateWebhookEndpointRequest')
  @ApiJsonResponse(201, 'WebhookEndpointCreated')
  create(@Caller() c: AccessContext, @Body(new ZodPipe(createBody)) body: z.infer<typeof createBody>) {
    return this.commands.execute(new CreateEndpointCommand(c.principal!.orgId, body));
  }
}
