import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { z } from 'zod';
import { AccessContext, Authenticated, Caller } from '@app/access';
import { apiInput, ApiJsonBody, ApiJsonResponse, ApiPathParams, ApiQueryParams, ZodPipe } from '@app/http';
import { WEBHOOK_EVENT_TYPES, WEBHOOK_TEST_EVENT_TYPE } from '../domain/event-types';
import { DELIVERY_ID_RE, ENDPOINT_ID_RE } from '../domain/ids';
import { MAX_URL_LENGTH } from '../domain/target';
import { DeliveryService } from '../delivery/delivery.service';
import { EndpointService } from '../endpoints/endpoint.service';
import './webhooks.openapi';

const eventTypes = z
  .array(z.enum(WEBHOOK_EVENT_TYPES, { error: `must be one of ${WEBHOOK_EVENT_TYPES.join(', ')}` }))
  .min(1, 'subscribe to at least one event type (omit the field for all)')
  .max(50);
const url = z.string({ error: 'url must be a string' }).min(1).max(MAX_URL_LENGTH);
const description = z.string().trim().max(500).nullable();
const createBody = apiInput(
  'CreateWebhookEndpointRequest',
  z.object({ url, event_types: eventTypes.optional(), description: description.optional(), enabled: z.boolean().optional() }).strict(),
);
const updateBody = apiInput(
  'UpdateWebhookEndpointRequest',
  z
    .object({ url: url.optional(), event_types: eventTypes.optional(), description: description.optional(), enabled: z.boolean().optional() })
    .strict()
    .refine((b) => Object.keys(b).length > 0, { message: 'nothing to change' }),
);
const endpointParams = z.object({ id: z.string().regex(ENDPOINT_ID_RE, 'must be a webhook endpoint id (ep_ and 32 hex digits)') });
const deliveryParams = z.object({ id: z.string().regex(DELIVERY_ID_RE, 'must be a webhook delivery id (dlv_ and 32 hex digits)') });
const recoverQuery = z.object({ since: z.iso.datetime({ offset: true, error: 'since must be an ISO-8601 date-time' }) }).strict();
const listQuery = z
  .object({
    endpoint_id: z.string().regex(ENDPOINT_ID_RE, 'must be a webhook endpoint id').optional(),
    status: z.enum(['pending', 'delivered', 'failed']).optional(),
    event_type: z.enum([...WEBHOOK_EVENT_TYPES, WEBHOOK_TEST_EVENT_TYPE]).optional(),
    limit: z.coerce.number().int().min(1).max(200).default(50),
    cursor: z.string().max(300).optional(),
  })
  .strict();

const actorOf = (c: AccessContext) => `api_key:${c.principal!.keyId}`;

@ApiTags('webhooks')
@ApiBearerAuth()
@Authenticated('webhooks:manage')
@Controller('api/cdp/webhooks')
export class WebhooksController {
  constructor(
    private readonly endpoints: EndpointService,
    private readonly deliveries: DeliveryService,
  ) {}

  @Post('endpoints')
  @HttpCode(201)
  @ApiOperation({ operationId: 'createWebhookEndpoint', summary: 'Register an endpoint; its signing secret is returned once, here' })
  @ApiJsonBody('CreateWebhookEndpointRequest')
  @ApiJsonResponse(201, 'WebhookEndpointCreated')
  create(@Caller() c: AccessContext, @Body(new ZodPipe(createBody)) body: z.infer<typeof createBody>) {
    return this.endpoints.create(c.principal!.orgId, body);
  }

  @Get('endpoints')
  @ApiOperation({ operationId: 'listWebhookEndpoints', summary: 'The organization’s endpoints (never a secret)' })
  @ApiJsonResponse(200, 'WebhookEndpointList')
  list(@Caller() c: AccessContext) {
    return this.endpoints.list(c.principal!.orgId);
  }

  @Get('endpoints/:id')
  @ApiOperation({ operationId: 'getWebhookEndpoint', summary: 'One endpoint' })
  @ApiPathParams(endpointParams)
  @ApiJsonResponse(200, 'WebhookEndpoint')
  get(@Caller() c: AccessContext, @Param(new ZodPipe(endpointParams, 'params')) p: z.infer<typeof endpointParams>) {
    return this.endpoints.get(c.principal!.orgId, p.id);
  }

  @Patch('endpoints/:id')
  @ApiOperation({ operationId: 'updateWebhookEndpoint', summary: 'Change an endpoint; enabled: true re-enables a disabled one' })
  @ApiPathParams(endpointParams)
  @ApiJsonBody('UpdateWebhookEndpointRequest')
  @ApiJsonResponse(200, 'WebhookEndpoint')
  update(
    @Caller() c: AccessContext,
    @Param(new ZodPipe(endpointParams, 'params')) p: z.infer<typeof endpointParams>,
    @Body(new ZodPipe(updateBody)) body: z.infer<typeof updateBody>,
  ) {
    return this.endpoints.update(c.principal!.orgId, p.id, body);
  }

  @Delete('endpoints/:id')
  @HttpCode(204)
  @ApiOperation({ operationId: 'deleteWebhookEndpoint', summary: 'Delete an endpoint; its pending deliveries are abandoned' })
  @ApiPathParams(endpointParams)
  @ApiResponse({ status: 204, description: 'Deleted' })
  async remove(@Caller() c: AccessContext, @Param(new ZodPipe(endpointParams, 'params')) p: z.infer<typeof endpointParams>) {
    await this.endpoints.remove(c.principal!.orgId, p.id);
  }

  @Post('endpoints/:id/rotate-secret')
  @HttpCode(200)
  @ApiOperation({ operationId: 'rotateWebhookSecret', summary: 'New signing secret; the previous one keeps signing beside it for 24 h' })
  @ApiPathParams(endpointParams)
  @ApiJsonResponse(200, 'WebhookSecretRotation')
  rotate(@Caller() c: AccessContext, @Param(new ZodPipe(endpointParams, 'params')) p: z.infer<typeof endpointParams>) {
    return this.endpoints.rotateSecret(c.principal!.orgId, p.id);
  }

  @Post('endpoints/:id/test')
  @HttpCode(202)
  @ApiOperation({ operationId: 'testWebhookEndpoint', summary: 'Send a webhook.test ping through the normal delivery path' })
  @ApiPathParams(endpointParams)
  @ApiJsonResponse(202, 'WebhookTestDelivery')
  test(@Caller() c: AccessContext, @Param(new ZodPipe(endpointParams, 'params')) p: z.infer<typeof endpointParams>) {
    return this.deliveries.sendTest(c.principal!.orgId, p.id, actorOf(c));
  }

  @Post('endpoints/:id/recover')
  @HttpCode(202)
  @ApiOperation({ operationId: 'recoverWebhookDeliveries', summary: 'Re-send every failed delivery of the endpoint since a time (same webhook-ids)' })
  @ApiPathParams(endpointParams)
  @ApiQueryParams(recoverQuery)
  @ApiJsonResponse(202, 'WebhookRecovery')
  recover(
    @Caller() c: AccessContext,
    @Param(new ZodPipe(endpointParams, 'params')) p: z.infer<typeof endpointParams>,
    @Query(new ZodPipe(recoverQuery, 'query')) q: z.infer<typeof recoverQuery>,
  ) {
    return this.deliveries.recover(c.principal!.orgId, p.id, new Date(q.since), actorOf(c));
  }

  @Get('deliveries')
  @ApiOperation({ operationId: 'listWebhookDeliveries', summary: 'Delivery history, newest first, in cursor pages' })
  @ApiQueryParams(listQuery)
  @ApiJsonResponse(200, 'WebhookDeliveryPage')
  deliveriesList(@Caller() c: AccessContext, @Query(new ZodPipe(listQuery, 'query')) q: z.infer<typeof listQuery>) {
    return this.deliveries.list(c.principal!.orgId, q);
  }

  @Get('deliveries/:id')
  @ApiOperation({ operationId: 'getWebhookDelivery', summary: 'One delivery with its payload and attempt history' })
  @ApiPathParams(deliveryParams)
  @ApiJsonResponse(200, 'WebhookDeliveryDetail')
  delivery(@Caller() c: AccessContext, @Param(new ZodPipe(deliveryParams, 'params')) p: z.infer<typeof deliveryParams>) {
    return this.deliveries.get(c.principal!.orgId, p.id);
  }

  @Post('deliveries/:id/redeliver')
  @HttpCode(202)
  @ApiOperation({ operationId: 'redeliverWebhook', summary: 'A new series of attempts for a finished delivery, with the same webhook-id' })
  @ApiPathParams(deliveryParams)
  @ApiJsonResponse(202, 'WebhookRedelivery')
  redeliver(@Caller() c: AccessContext, @Param(new ZodPipe(deliveryParams, 'params')) p: z.infer<typeof deliveryParams>) {
    return this.deliveries.redeliver(c.principal!.orgId, p.id, actorOf(c));
  }
}
