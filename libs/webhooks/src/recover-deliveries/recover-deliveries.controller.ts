import { Controller, HttpCode, Param, Post, Query } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { z } from 'zod';
import { AccessContext, Authenticated, Caller } from '@app/access';
import { ApiJsonResponse, ApiPathParams, ApiQueryParams, ZodPipe } from '@app/http';
import { Idempotent, IdempotencyOf, IdempotentCall } from '@app/idempotency';
import { actorOf, EndpointParams, endpointParams, recoverQuery } from '../http/webhooks-http';
import { RecoverDeliveriesCommand } from './recover-deliveries.command';

@ApiTags('webhooks')
@ApiBearerAuth()
@Authenticated('webhooks:manage')
@Controller('api/cdp/webhooks')
export class RecoverDeliveriesController {
  constructor(private readonly commands: CommandBus) {}

  @Post('endpoints/:id/recover')
  // The key covers the query too: the same key with another `since` is 422 idempotency_key_reused.
  @Idempotent()
  @HttpCode(202)
  @ApiOperation({ operationId: 'recoverWebhookDeliveries', summary: 'Re-send every failed delivery of the endpoint since a time (same webhook-ids)' })
  @ApiPathParams(endpointParams)
  @ApiQueryParams(recoverQuery)
  @ApiJsonResponse(202, 'WebhookRecovery')
  recover(
    @Caller() c: AccessContext,
    @Param(new ZodPipe(endpointParams, 'params')) p: EndpointParams,
    @Query(new ZodPipe(recoverQuery, 'query')) q: z.infer<typeof recoverQuery>,
    @IdempotencyOf() call: IdempotentCall,
  ) {
    return call.run(() => this.commands.execute(new RecoverDeliveriesCommand(c.principal!.orgId, p.id, new Date(q.since), actorOf(c))));
  }
}
