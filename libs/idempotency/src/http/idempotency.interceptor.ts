import { CallHandler, ExecutionContext, Inject, Injectable, NestInterceptor, Optional } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { lastValueFrom, Observable, of } from 'rxjs';
import type { AccessContext } from '@app/access';
import { AppError, KEY_ENCRYPTION_KEY } from '@app/core';
import { Metrics, UNMATCHED_ROUTE } from '@app/metrics';
import { IDEMPOTENCY_KEY_HEADER, IDEMPOTENT_REPLAYED_HEADER, parseIdempotencyKey } from '../idempotency-key';
import { IdempotencyService } from '../idempotency.service';
import { openResponse, SealedResponse, sealResponse } from '../sealed-response';
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
    @Optional() @Inject(KEY_ENCRYPTION_KEY) private readonly kek?: Buffer,
    @Optional() private readonly metrics?: Metrics,
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
    const owner = scopeOwner(req.access);
    const kek = options.sealResponse ? this.sealingKey() : undefined;
    let fresh: unknown;
    let result;
    try {
      result = await this.idempotency.run(
        { orgId: owner, key, method: req.method, path: req.url, body: req.body, query: req.query as Record<string, unknown> | undefined },
        // Nest sets the route's status before the handler runs; a handler may change it.
        async () => {
          fresh = await lastValueFrom(next.handle(), { defaultValue: undefined });
          return { status: reply.statusCode, body: kek ? sealResponse(kek, owner, key, fresh) : fresh };
        },
      );
    } catch (err) {
      this.count(req, err);
      throw err;
    }
    if (!result.replayed) return of(fresh);
    this.metrics?.idempotencyReplayed(req.routeOptions.url ?? UNMATCHED_ROUTE);
    reply.status(result.status);
    for (const [name, value] of Object.entries(result.headers ?? {})) reply.header(name, value);
    reply.header(IDEMPOTENT_REPLAYED_HEADER, 'true');
    return of(kek ? openResponse(kek, owner, key, result.body as SealedResponse) : result.body);
  }

  /** A replayed refusal, a reused key or a request still in progress, in the metrics. */
  private count(req: AccessRequest, err: unknown): void {
    if (!this.metrics || !(err instanceof AppError)) return;
    const route = req.routeOptions.url ?? UNMATCHED_ROUTE;
    if (err.headers?.[IDEMPOTENT_REPLAYED_HEADER] === 'true') this.metrics.idempotencyReplayed(route);
    else if (err.code === 'idempotency_key_reused') this.metrics.idempotencyConflict(route, 'key_reused');
    else if (err.code === 'idempotency_request_in_progress') this.metrics.idempotencyConflict(route, 'in_progress');
  }

  private sealingKey(): Buffer {
    if (!this.kek) throw new Error('@Idempotent({ sealResponse: true }) needs KEY_ENCRYPTION_KEY (PlatformModule provides it)');
    return this.kek;
  }
}
