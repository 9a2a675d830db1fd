import { Body, Controller, HttpCode, Optional, Post } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AccessContext, Authenticated, Caller } from '@app/access';
import { ApiJsonBody, ApiJsonResponse } from '@app/http';
import { Idempotent, IdempotencyOf, IdempotentCall } from '@app/idempotency';
import { Metrics } from '@app/metrics';
import { parseAuthorizationRequest } from '../domain/authorization-request';
import { actorOf, idempotencyHeader } from '../http/commerce-http';
import { AuthorizePaymentCommand } from './authorize-payment.command';

@ApiTags('commerce')
@ApiBearerAuth()
@Controller('api/cdp')
export class AuthorizePaymentController {
  constructor(
    private readonly commands: CommandBus,
    @Optional() private readonly metrics?: Metrics,
  ) {}

  @Post('authorize')
  @Idempotent()
  @HttpCode(200)
  @Authenticated('payments:write')
  @ApiOperation({ operationId: 'authorize', summary: 'Evaluate a payment_authorization.v1 request against the policy and record the decision' })
  @idempotencyHeader
  @ApiJsonBody('AuthorizationRequest')
  @ApiJsonResponse(200, 'AuthorizationDecision')
  authorize(@Caller() caller: AccessContext, @Body() body: unknown, @IdempotencyOf() call: IdempotentCall) {
    return call.run(async (keyed) => {
      const request = parseAuthorizationRequest(body ?? undefined);
      const p = caller.principal!;
      const started = performance.now();
      const decision = await this.commands.execute(new AuthorizePaymentCommand(p.orgId, actorOf(caller), p.mode, request, keyed?.requestId));
      this.metrics?.authorizationDecided(decision.decision, decision.reason_code, (performance.now() - started) / 1000);
      return decision;
    });
  }
}
