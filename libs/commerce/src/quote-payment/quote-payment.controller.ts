import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AccessContext, Authenticated, Caller } from '@app/access';
import { AppError } from '@app/core';
import { ApiJsonBody, ApiJsonResponse } from '@app/http';
import { parseAuthorizationRequest } from '../domain/authorization-request';
import type { PaymentQuote } from './quote-payment.handler';
import { QuotePaymentQuery } from './quote-payment.query';

@ApiTags('commerce')
@ApiBearerAuth()
@Controller('api/cdp')
export class QuotePaymentController {
  constructor(private readonly queries: QueryBus) {}

  @Post('quote')
  @HttpCode(200)
  @Authenticated()
  @ApiOperation({ operationId: 'quotePayment', summary: "What authorize would decide for a payment_authorization.v1 request now, against the caller's policy and recorded spend; records nothing" })
  @ApiJsonBody('AuthorizationRequest')
  @ApiJsonResponse(200, 'PaymentQuote')
  async quote(@Caller() caller: AccessContext, @Body() body: unknown) {
    const p = caller.principal!;
    // Either payments scope: a quote reads, it decides nothing.
    if (!p.scopes.includes('payments:read') && !p.scopes.includes('payments:write')) {
      throw new AppError('insufficient_scope', 'This key needs one of the scopes payments:read, payments:write', 403, { missing_scopes: ['payments:read', 'payments:write'], any_of: true });
    }
    const request = parseAuthorizationRequest(body ?? undefined);
    return this.queries.execute<QuotePaymentQuery, PaymentQuote>(new QuotePaymentQuery(p.orgId, request));
  }
}
