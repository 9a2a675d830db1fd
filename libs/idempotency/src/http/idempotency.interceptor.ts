import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { lastValueFrom, Observable, of } from 'rxjs';
import type { AccessContext } from '@app/access';
import { AppError } from '@app/core';
import { IDEMPOTENCY_KEY_HEADER, IDEMPOTENT_REPLAYED_HEADER, parseIdempotencyKey } from '../idempotency-key';
import { IdempotencyService } from '../idempotency.service';
import { IDEMPOTENT, IdempotentOptions } from './idempotent.metadata';

type AccessRequest = FastifyRequest & { access?: AccessContext };

/** The key's owner: the caller's organization; a keyless caller is scoped to its own lane identity. */
function scopeOwner(access: AccessContext | undefined): string {
  if (!access) throw new Error('@Idempotent() needs the access guard on the route (@Authenticated, @Throttle or @LaneAware)');
  return access.principal ? access.principal.orgId : `${access.lane}:${access.identityKey}`;
}

/** Wraps an @Idempotent() route in IdempotencyService.run; see the decorator. */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  constructor(
    private readonly reflector: Reflector,
    private readonly idempotency: IdempotencyService,
  ) {}

  async intercept(ctx: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    const options = this.reflector.get<IdempotentOptions | undefined>(IDEMPOTENT, ctx.getHandler()) ?? {};
    const req = ctx.switchToHttp().getRequest<AccessRequest>();
    const reply = ctx.switchToHttp().getResponse<FastifyReply>();
    const header = req.headers[IDEMPOTENCY_KEY_HEADER];
    if (header === undefined) {
      if (options.required) throw new AppError('idempotency_key_required', 'This endpoint needs an Idempotency-Key header', 400);
      return next.handle();
    }
    const key = parseIdempotencyKey(header);
    const result = await this.idempotency.run(
      { orgId: scopeOwner(req.access), key, method: req.method, path: req.url, body: req.body },
      // Nest sets the route's status before the handler runs; a handler may change it.
      async () => {
        const body = await lastValueFrom(next.handle(), { defaultValue: undefined });
        return { status: reply.statusCode, body };
      },
    );
    if (result.replayed) {
      reply.status(result.status);
      for (const [name, value] of Object.entries(result.headers ?? {})) reply.header(name, value);
      reply.header(IDEMPOTENT_REPLAYED_HEADER, 'true');
    }
    return of(result.body);
  }
}
