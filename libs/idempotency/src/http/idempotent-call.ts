import { createParamDecorator, ExecutionContext, Inject, Injectable, Optional, PipeTransform } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AccessContext } from '@app/access';
import { AppError, KEY_ENCRYPTION_KEY } from '@app/core';
import { UNMATCHED_ROUTE } from '@app/metrics';
import { IDEMPOTENCY_KEY_HEADER, IDEMPOTENT_REPLAYED_HEADER, parseIdempotencyKey } from '../idempotency-key';
import { IdempotencyService, IdempotentRequest } from '../idempotency.service';
import { openResponse, SealedResponse, sealResponse } from '../sealed-response';
import { IDEMPOTENT, IdempotentOptions } from './idempotent.metadata';

type AccessRequest = FastifyRequest & { access?: AccessContext };

/**
 * What an @Idempotent() route does its work through: `return call.run(() => work)`. The first
 * request with a key runs `work`; a later one with the same key and body gets the first answer
 * (status, headers and body) with `Idempotent-Replayed: true`, as IdempotencyService decides.
 */
export interface IdempotentCall {
  /** `request` is there when the caller sent a key: what the work creates should be named from its `requestId`. */
  run<T>(work: (request?: IdempotentRequest) => Promise<T>): Promise<T>;
}

interface RouteRequest {
  req: AccessRequest;
  reply: FastifyReply;
  handler: object;
}

/**
 * The key's owner: the caller's organization (a keyless caller: its own lane identity). The
 * caller it is bound to: the API key, named as its events name it (`api_key:<id>`). The key, not
 * the organization or the key's owner: it is what the request proves and the reviewer a signed
 * review names, and it is known without a read. A retry comes with the same API key; another
 * key's request (another reviewer, another system) gets 422, never this caller's answer.
 */
function scopeOf(access: AccessContext | undefined): { owner: string; caller: string } {
  if (!access) throw new Error('@Idempotent() needs the access guard on the route (@Authenticated, @Throttle or @LaneAware)');
  if (access.principal) return { owner: access.principal.orgId, caller: `api_key:${access.principal.keyId}` };
  const identity = `${access.lane}:${access.identityKey}`;
  return { owner: identity, caller: identity };
}

/**
 * Makes the route's IdempotentCall. A pipe rather than an interceptor: Nest wraps every
 * intercepted request in RxJS observables and two `AsyncResource.bind`s, which cost the
 * authorization path a tenth of its CPU and, living as long as the request, filled the old
 * generation (a third of what got promoted). A pipe is a plain call, and the route runs its
 * work inside `run` itself.
 */
@Injectable()
export class IdempotentCallPipe implements PipeTransform<RouteRequest, IdempotentCall> {
  /** Per route handler: its @Idempotent() options and its route template (read once: `routeOptions` builds an object on every read). */
  private readonly routes = new WeakMap<object, { options: Required<IdempotentOptions>; route: string }>();

  constructor(
    private readonly reflector: Reflector,
    private readonly idempotency: IdempotencyService,
    @Optional() @Inject(KEY_ENCRYPTION_KEY) private readonly kek?: Buffer,
  ) {}

  transform(request: RouteRequest): IdempotentCall {
    const route = this.routeOf(request);
    return { run: (work) => this.run(request, route, work) };
  }

  private routeOf({ req, handler }: RouteRequest): { options: Required<IdempotentOptions>; route: string } {
    let known = this.routes.get(handler);
    if (!known) {
      const options = this.reflector.get<Required<IdempotentOptions> | undefined>(IDEMPOTENT, handler as (...args: unknown[]) => unknown);
      if (!options) throw new Error('@IdempotencyOf() is for routes marked @Idempotent()');
      this.routes.set(handler, (known = { options, route: req.routeOptions.url ?? UNMATCHED_ROUTE }));
    }
    return known;
  }

  private async run<T>({ req, reply }: RouteRequest, { options, route }: { options: Required<IdempotentOptions>; route: string }, work: (request?: IdempotentRequest) => Promise<T>): Promise<T> {
    const header = req.headers[IDEMPOTENCY_KEY_HEADER];
    if (header === undefined) {
      if (options.required) throw new AppError('idempotency_key_required', 'This endpoint needs an Idempotency-Key header', 400);
      return work();
    }
    const key = parseIdempotencyKey(header);
    const { owner, caller } = scopeOf(req.access);
    const kek = options.sealResponse ? this.sealingKey() : undefined;
    let fresh: T | undefined;
    const result = await this.idempotency.run(
      { orgId: owner, caller, key, method: req.method, path: req.url, body: req.body, query: req.query as Record<string, unknown> | undefined, route },
      // Nest sets the route's status before its pipes run; the work may change it.
      async (request) => {
        fresh = await work(request);
        return { status: reply.statusCode, body: kek ? sealResponse(kek, owner, key, fresh) : fresh };
      },
    );
    if (!result.replayed) return fresh as T;
    reply.status(result.status);
    for (const [name, value] of Object.entries(result.headers ?? {})) reply.header(name, value);
    reply.header(IDEMPOTENT_REPLAYED_HEADER, 'true');
    return (kek ? openResponse(kek, owner, key, result.body as SealedResponse) : result.body) as T;
  }

  private sealingKey(): Buffer {
    if (!this.kek) throw new Error('@Idempotent({ sealResponse: true }) needs KEY_ENCRYPTION_KEY (PlatformModule provides it)');
    return this.kek;
  }
}

const routeRequest = createParamDecorator((_data: unknown, ctx: ExecutionContext): RouteRequest => {
  const http = ctx.switchToHttp();
  return { req: http.getRequest<AccessRequest>(), reply: http.getResponse<FastifyReply>(), handler: ctx.getHandler() };
});

/** The route's IdempotentCall, on a route marked @Idempotent(): `@IdempotencyOf() call: IdempotentCall`. */
export const IdempotencyOf = (): ParameterDecorator => routeRequest(IdempotentCallPipe);
