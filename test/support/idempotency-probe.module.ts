import { Body, Controller, HttpCode, Module, Post } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { AccessContext, Authenticated, Caller } from '@app/access';
import { AppError } from '@app/core';
import { ZodPipe } from '@app/http';
import { Idempotent, IdempotencyModule, IdempotencyOf, IdempotentCall } from '@app/idempotency';

const orderBody = z.object({ amount_cents: z.number().int().positive(), note: z.string().optional(), tags: z.array(z.string()).optional() }).strict();

/** How many times each organization's handler actually ran. */
export const probeRuns = new Map<string, number>();

/** Test-only routes behind @Idempotent(), to drive the rule over HTTP. */
@Controller('__idem')
class IdempotencyProbeController {
  @Post('orders')
  @Authenticated('payments:write')
  @Idempotent({ required: true })
  order(@Caller() caller: AccessContext, @Body(new ZodPipe(orderBody)) body: z.infer<typeof orderBody>, @IdempotencyOf() call: IdempotentCall) {
    return call.run(async () => {
      const org = caller.principal!.orgId;
      probeRuns.set(org, (probeRuns.get(org) ?? 0) + 1);
      await new Promise((r) => setTimeout(r, 100));
      if (body.amount_cents === 404) throw new AppError('not_found', 'No such merchant', 404);
      if (body.amount_cents === 500) throw new Error('the ledger is down');
      return { ok: true, order_id: `ord_${randomBytes(8).toString('hex')}`, amount_cents: body.amount_cents };
    });
  }

  @Post('optional')
  @HttpCode(200)
  @Authenticated('payments:write')
  @Idempotent()
  optional(@Caller() caller: AccessContext, @IdempotencyOf() call: IdempotentCall) {
    return call.run(async () => {
      const org = caller.principal!.orgId;
      probeRuns.set(org, (probeRuns.get(org) ?? 0) + 1);
      return { ok: true, id: randomBytes(8).toString('hex') };
    });
  }
}

@Module({ imports: [IdempotencyModule.forRoot()], controllers: [IdempotencyProbeController] })
export class IdempotencyProbeModule {}
