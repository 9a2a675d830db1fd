import { Controller, HttpCode, Param, Post } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AccessContext, Authenticated, Caller } from '@app/access';
import { ApiJsonResponse, ApiPathParams, ZodPipe } from '@app/http';
import { Idempotent, IdempotencyOf, IdempotentCall } from '@app/idempotency';
import { actorOf, EndpointParams, endpointParams } from '../http/webhooks-http';
import { TestEndpointCommand } from './test-endpoint.command';

@ApiTags('webhooks')
@ApiBearerAuth()
@Authenticated('webhooks:manage')
@Controller('api/cdp/webhooks')
export class TestEndpointController {
  constructor(private readonly commands: CommandBus) {}

  @Post('endpoints/:id/test')
  @Idempotent()
  @HttpCode(202)
  @ApiOperation({ operationId: 'testWebhookEndpoint', summary: 'Send a webhook.test ping through the normal delivery path' })
  @ApiPathParams(endpointParams)
  @ApiJsonResponse(202, 'WebhookTestDelivery')
  test(@Caller() c: AccessContext, @Param(new ZodPipe(endpointParams, 'params')) p: EndpointParams, @IdempotencyOf() call: IdempotentCall) {
    return call.run(() => this.commands.execute(new TestEndpointCommand(c.principal!.orgId, p.id, actorOf(c))));
  }
}
