import { Controller, Get, Param, Query } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { z } from 'zod';
import { AccessContext, Authenticated, Caller } from '@app/access';
import { ApiJsonResponse, ApiPathParams, ApiQueryParams, ZodPipe } from '@app/http';
import { DeliveryParams, deliveryParams, listQuery } from '../http/webhooks-http';
import { GetDeliveryQuery, ListDeliveriesQuery } from './delivery.queries';

@ApiTags('webhooks')
@ApiBearerAuth()
@Authenticated('webhooks:manage')
@Controller('api/cdp/webhooks')
export class QueryDeliveriesController {
  constructor(private readonly queries: QueryBus) {}

  @Get('deliveries')
  @ApiOperation({ operationId: 'listWebhookDeliveries', summary: 'Delivery history, newest first, in cursor pages' })
  @ApiQueryParams(listQuery)
  @ApiJsonResponse(200, 'WebhookDeliveryPage')
  list(@Caller() c: AccessContext, @Query(new ZodPipe(listQuery, 'query')) q: z.infer<typeof listQuery>) {
    return this.queries.execute(new ListDeliveriesQuery(c.principal!.orgId, q));
  }

  @Get('deliveries/:id')
  @ApiOperation({ operationId: 'getWebhookDelivery', summary: 'One delivery with its payload and attempt history' })
  @ApiPathParams(deliveryParams)
  @ApiJsonResponse(200, 'WebhookDeliveryDetail')
  get(@Caller() c: AccessContext, @Param(new ZodPipe(deliveryParams, 'params')) p: DeliveryParams) {
    return this.queries.execute(new GetDeliveryQuery(c.principal!.orgId, p.id));
  }
}
