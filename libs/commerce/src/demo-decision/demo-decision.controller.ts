import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { Throttle } from '@app/access';
import { ApiJsonBody, ApiJsonResponse } from '@app/http';
import { parseAuthorizationRequest } from '../domain/authorization-request';
import type { DemoDecision } from './demo-decision.handler';
import { DemoDecisionQuery } from './demo-decision.query';

@ApiTags('commerce')
@Controller('api/demo')
export class DemoDecisionController {
  constructor(private readonly queries: QueryBus) {}

  @Post('decision-ledger')
  @HttpCode(200)
  @Throttle('demo_window')
  @ApiOperation({ operationId: 'demoDecision', summary: 'Anonymous demo: a payment_authorization.v1 request decided against a fixed demo policy, with its signed decision record; nothing is recorded' })
  @ApiJsonBody('AuthorizationRequest')
  @ApiJsonResponse(200, 'DemoDecision')
  async decide(@Body() body: unknown) {
    return this.queries.execute<DemoDecisionQuery, DemoDecision>(new DemoDecisionQuery(parseAuthorizationRequest(body ?? undefined)));
  }
}
