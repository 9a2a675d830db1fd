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
import { RejectAuthorizationCommand } from './reject-authorization.command';

const rejectBody = apiInput('RejectAuthorizationRequest', z.strictObject({ note: z.string().max(2000).optional() }));

@ApiTags('commerce')
@ApiBearerAuth()
@Controller('api/cdp')
export class RejectAuthorizationController {
  constructor(private readonly commands: CommandBus) {}

  @Post('approvals/:authorization_id/reject')
  @Idempotent()
  @HttpCode(200)
  @Authenticated('approvals:manage')
  @ApiOperation({ operationId: 'rejectAuthorization', summary: 'Reject an escalated authorization' })
  @idempotencyHeader
  @ApiPathParams(authParams)
  @ApiBody({ required: false, schema: schemaRef('RejectAuthorizationRequest') })
  @ApiJsonResponse(200, 'Transaction')
  reject(@Caller() caller: AccessContext, @Param(new ZodPipe(authParams, 'params')) p: z.infer<typeof authParams>, @Body() raw: unknown, @IdempotencyOf() call: IdempotentCall) {
    return call.run(async (keyed) => {
      const body = new ZodPipe(rejectBody).transform(raw ?? {});
      const command = new RejectAuthorizationCommand(caller.principal!.orgId, p.authorization_id, actorOf(caller), body.note ?? null, null, keyed?.requestId);
      const row = await this.commands.execute<RejectAuthorizationCommand, TransactionRow>(command);
      return transactionView(row);
    });
  }
}
