import { Body, Controller, HttpCode, Param, Post } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiBody, ApiOperation, ApiTags } from '@nestjs/swagger';
import { z } from 'zod';
import { AccessContext, Authenticated, Caller } from '@app/access';
import { apiInput, ApiJsonResponse, ApiPathParams, schemaRef, ZodPipe } from '@app/http';
import { Idempotent, IdempotencyOf, IdempotentCall } from '@app/idempotency';
import { actorOf, authParams, idempotencyHeader } from '../http/commerce-http';
import { transactionView } from '../transactions/transaction.queries';
import type { TransactionRow } from '../transactions/transaction-row';
import { ApproveAuthorizationCommand } from './approve-authorization.command';

const reviewBody = apiInput(
  'ApproveAuthorizationRequest',
  z.strictObject({
    note: z.string().max(2000).optional(),
    amount_cents: z.number().int().positive().max(Number.MAX_SAFE_INTEGER).optional().describe('approve a lower amount'),
  }),
);

@ApiTags('commerce')
@ApiBearerAuth()
@Controller('api/cdp')
export class ApproveAuthorizationController {
  constructor(private readonly commands: CommandBus) {}

  @Post('approvals/:authorization_id/approve')
  @Idempotent()
  @HttpCode(200)
  @Authenticated('approvals:manage')
  @ApiOperation({
    operationId: 'approveAuthorization',
    summary: 'Approve an escalated authorization, optionally for a lower amount',
    description:
      'Records a signed payment_review.v1. Under a policy with `review.approvals_required: 2` the first approval leaves the transaction `needs_review` (authorization.approval_recorded) and the second, by a different reviewer (another key with another owner), authorizes it at the lower of the two amounts; the same reviewer again is 409 `reviewer_already_approved`.',
  })
  @idempotencyHeader
  @ApiPathParams(authParams)
  @ApiBody({ required: false, schema: schemaRef('ApproveAuthorizationRequest') })
  @ApiJsonResponse(200, 'Transaction')
  approve(@Caller() caller: AccessContext, @Param(new ZodPipe(authParams, 'params')) p: z.infer<typeof authParams>, @Body() raw: unknown, @IdempotencyOf() call: IdempotentCall) {
    return call.run(async (keyed) => {
      const body = new ZodPipe(reviewBody).transform(raw ?? {});
      const command = new ApproveAuthorizationCommand(caller.principal!.orgId, p.authorization_id, actorOf(caller), body.amount_cents, body.note ?? null, null, keyed?.requestId);
      const row = await this.commands.execute<ApproveAuthorizationCommand, TransactionRow>(command);
      return transactionView(row);
    });
  }
}
