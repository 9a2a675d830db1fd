import { createParamDecorator, ExecutionContext, SetMetadata } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { BucketName, DidStatus, Lane } from '../domain/lanes';
import type { Scope } from '../domain/scopes';
import type { Principal } from '../keys/access.service';

/** What the access guard learned about the caller, attached to the request. */
export interface AccessContext {
  lane: Lane;
  principal: Principal | null;
  /** Opaque: the key id, a hash of the DID, or a hash of the IP. */
  identityKey: string;
  ip: string;
  didStatus: DidStatus | null;
  didRotation: { unique: number; max: number; windowSeconds: number; resetAt: Date } | null;
}

export const AUTH_SCOPES = 'access:scopes';
export const THROTTLE_BUCKET = 'access:bucket';
export const LANE_AWARE = 'access:lane-aware';

/** The route needs a valid bearer key holding every listed scope (none listed: any key). */
export const Authenticated = (...scopes: Scope[]) => SetMetadata(AUTH_SCOPES, scopes);

/** The route counts against a bucket of the spec's throttle table, per lane. */
export const Throttle = (bucket: BucketName) => SetMetadata(THROTTLE_BUCKET, bucket);

/** The route reads the caller's lane without counting anything (quota introspection). */
export const LaneAware = () => SetMetadata(LANE_AWARE, true);

export const Caller = createParamDecorator((_: unknown, ctx: ExecutionContext): AccessContext => {
  const req = ctx.switchToHttp().getRequest<FastifyRequest & { access?: AccessContext }>();
  if (!req.access) throw new Error('@Caller() used on a route the access guard did not resolve');
  return req.access;
});
