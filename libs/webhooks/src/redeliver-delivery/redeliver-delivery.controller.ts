import { Controller, HttpCode, Param, Post } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AccessContext, Authenticated, Caller } from '@app/access';
import { ApiJsonResponse, ApiPathParams, ZodPipe } from '@app/http';
import { Idempotent, IdempotencyOf, IdempotentCall } from '@app/idempotency';
import { actorOf, DeliveryParams, deliveryParams } from '../http/webhooks-http';
import { RedeliverDeliveryCommand } from './redeliver-delivery.command';

@ApiTags('webhooks')
@ApiBearerAuth()
@Authenticated('webhooks:manage')
@Controller('api/cdp/webhooks')
export class RedeliverDeliveryController {
  constructor(private readonly commands: CommandBus) {}

  @Post('deliveries/:id/redeliver')
  @Idempotent()
  @HttpCode(202)
  @ApiOperation({ operationId: 'redeliverWebhook', summary: 'A new series of attempts for a finished delivery, with the same webhook-id' })
  @ApiPathParams(deliveryParams)
  @ApiJsonResponse(202, 'WebhookRedelivery')
  redeliver(@Caller() c: AccessContext, @Param(new ZodPipe(deliveryParams, 'params')) p: DeliveryParams, @IdempotencyOf() call: IdempotentCall) {
    return call.run(() => this.commands.execute(new RedeliverDeliveryCommand(c.principal!.orgId, p.id, actorOf(c))));
  }
}
