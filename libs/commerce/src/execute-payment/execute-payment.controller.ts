import { Controller, HttpCode, Param, Post } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { z } from 'zod';
import { AccessContext, Authenticated, Caller } from '@app/access';
import { AppError, DomainError } from '@app/core';
import { ApiJsonResponse, ApiPathParams, ZodPipe } from '@app/http';
import { Idempotent, IdempotencyOf, IdempotentCall } from '@app/idempotency';
import { actorOf, idempotencyHeader, txParams } from '../http/commerce-http';
import { transactionView } from '../transactions/transaction.queries';
import { ExecutePaymentCommand } from './execute-payment.command';
import type { ExecutionResult } from './execute-payment.handler';

@ApiTags('commerce')
@ApiBearerAuth()
@Controller('api/cdp')
export class ExecutePaymentController {
  constructor(private readonly commands: CommandBus) {}

  @Post('transactions/:id/execute')
  @Idempotent()
  @HttpCode(200)
  @Authenticated('payments:write')
  @ApiOperation({ operationId: 'executeTransaction', summary: 'Settle an authorized transaction through its settlement provider' })
  @idempotencyHeader
  @ApiPathParams(txParams)
  @ApiJsonResponse(200, 'ExecutionResult')
  execute(@Caller() caller: AccessContext, @Param(new ZodPipe(txParams, 'params')) p: z.infer<typeof txParams>, @IdempotencyOf() call: IdempotentCall) {
    return call.run(() => this.settle(caller, p.id));
  }

  private async settle(caller: AccessContext, transactionId: string) {
    const result = await this.commands
      .execute<ExecutePaymentCommand, ExecutionResult>(new ExecutePaymentCommand(caller.principal!.orgId, transactionId, actorOf(caller)))
      .catch((err: unknown) => {
        // A payment declined earlier is a conflict with the transaction's state now (409), not the decline itself (402).
        if (err instanceof DomainError && err.code === 'payment_declined') throw new AppError(err.code, err.message, 409, err.details);
        throw err;
      });
    const body = { outcome: result.outcome, transaction: transactionView(result.transaction), ...(result.receipt ? { receipt: result.receipt } : {}) };
    if (result.outcome === 'declined') {
      throw new AppError('payment_declined', `the provider declined the payment (${result.error_code})`, 402, body);
    }
    if (result.outcome === 'failed') {
      // 502 with retryable: the transaction stays authorized and a retry reuses the provider key.
      throw new AppError('settlement_failed', `settlement did not complete (${result.error_code}); retry while the authorization window lasts`, 502, { ...body, retryable: true }, { 'Retry-After': '1' });
    }
    return body;
  }
}
