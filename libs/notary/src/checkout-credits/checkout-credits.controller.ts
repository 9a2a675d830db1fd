import { Body, Controller, Headers, HttpCode, Post } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { z } from 'zod';
import { AccessContext, Authenticated, Caller } from '@app/access';
import { Idempotent, IdempotencyOf, IdempotentCall } from '@app/idempotency';
import { apiInput, ApiJsonBody, ApiJsonResponse, ZodPipe } from '@app/http';
import { CheckoutCreditsCommand, CheckoutResult } from './checkout-credits.command';
import '../http/notary.openapi';

const checkoutBody = apiInput('CreditsCheckoutRequest', z.object({ credits: z.number().int().min(1).max(10_000) }).strict());

@ApiTags('certificates')
@ApiBearerAuth()
@Controller('api/payments')
export class CheckoutCreditsController {
  constructor(private readonly commands: CommandBus) {}

  /** Buys issuance credits (100 cents each) through the settlement provider; the sandbox completes at once. */
  @Post('notary-credits-checkout')
  @HttpCode(200)
  @Authenticated('certificates:write')
  @ApiOperation({ operationId: 'buyNotaryCredits', summary: 'Buy issuance credits (100 cents each); a repeated Idempotency-Key is the same checkout' })
  @Idempotent()
  @ApiJsonBody('CreditsCheckoutRequest')
  @ApiJsonResponse(200, 'CreditsCheckout')
  checkout(
    @Caller() caller: AccessContext,
    @Body(new ZodPipe(checkoutBody)) body: z.infer<typeof checkoutBody>,
    @Headers('idempotency-key') key: string | undefined,
    @IdempotencyOf() call: IdempotentCall,
  ) {
    // call.run checks the key (the one rule) and replays a repeated request; the key also
    // names the provider charge, so even a request that died half-way charges once.
    return call.run(() => this.commands.execute<CheckoutCreditsCommand, CheckoutResult>(new CheckoutCreditsCommand(caller.principal!.orgId, body.credits, key)));
  }
}
