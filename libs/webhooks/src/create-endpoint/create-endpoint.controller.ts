import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { z } from 'zod';
import { AccessContext, Authenticated, Caller } from '@app/access';
import { ApiJsonBody, ApiJsonResponse, ZodPipe } from '@app/http';
import { Idempotent, IdempotencyOf, IdempotentCall } from '@app/idempotency';
import { createBody } from '../http/webhooks-http';
import { CreateEndpointCommand } from './create-endpoint.command';

@ApiTags('webhooks')
@ApiBearerAuth()
@Authenticated('webhooks:manage')
@Controller('api/cdp/webhooks')
export class CreateEndpointController {
  constructor(private readonly commands: CommandBus) {}

  @Post('endpoints')
  // A repeated Idempotency-Key answers the first response (the same endpoint, the same secret)
  // instead of creating a second endpoint. That response holds the signing secret, shown once:
  // it is kept sealed under KEY_ENCRYPTION_KEY (sealResponse), as the endpoint's own secret is in
  // webhook_endpoint_secrets, never in plain text. Sealing the stored response was chosen over
  // storing it without the secret and reading the endpoint's secret again on a replay: a replay
  // stays exactly the first response even after a rotation or a deletion, and the idempotency
  // rule stays one generic mechanism with no webhook-specific code.
  @Idempotent({ sealResponse: true })
  @HttpCode(201)
  @ApiOperation({ operationId: 'createWebhookEndpoint', summary: 'Register an endpoint; its signing secret is returned once, here' })
  @ApiJsonBody('CreateWebhookEndpointRequest')
  @ApiJsonResponse(201, 'WebhookEndpointCreated')
  create(@Caller() c: AccessContext, @Body(new ZodPipe(createBody)) body: z.infer<typeof createBody>, @IdempotencyOf() call: IdempotentCall) {
    return call.run((keyed) => this.commands.execute(new CreateEndpointCommand(c.principal!.orgId, body, keyed?.requestId)));
  }
}
