import { Controller, Get, Param } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AccessContext, Authenticated, Caller } from '@app/access';
import { ApiJsonResponse, ApiPathParams, ZodPipe } from '@app/http';
import { EndpointParams, endpointParams } from '../http/webhooks-http';
import { GetEndpointQuery, ListEndpointsQuery } from './endpoint.queries';

@ApiTags('webhooks')
@ApiBearerAuth()
@Authenticated('webhooks:manage')
@Controller('api/cdp/webhooks')
export class QueryEndpointsController {
  constructor(private readonly queries: QueryBus) {}

  @Get('endpoints')
  @ApiOperation({ operationId: 'listWebhookEndpoints', summary: 'The organization’s endpoints (never a secret)' })
  @ApiJsonResponse(200, 'WebhookEndpointList')
  list(@Caller() c: AccessContext) {
    return this.queries.execute(new ListEndpointsQuery(c.principal!.orgId));
  }

  @Get('endpoints/:id')
  @ApiOperation({ operationId: 'getWebhookEndpoint', summary: 'One endpoint' })
  @ApiPathParams(endpointParams)
  @ApiJsonResponse(200, 'WebhookEndpoint')
  get(@Caller() c: AccessContext, @Param(new ZodPipe(endpointParams, 'params')) p: EndpointParams) {
    return this.queries.execute(new GetEndpointQuery(c.principal!.orgId, p.id));
  }
}
