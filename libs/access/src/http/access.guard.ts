import { CanActivate, ExecutionContext, Inject, Injectable, Optional } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { hash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { APP_CONFIG, AppConfig, AppError, LOGGER } from '@app/core';
import type { Logger } from '@app/http';
import { Metrics } from '@app/metrics';
import { parseAuthorization } from '../domain/api-key';
import { didIdentityKey, parseAgentDid } from '../domain/agent-did';
import { clientNetwork } from '../domain/client-network';
import { BucketName, BucketPolicy, BucketRule, BUCKETS, ruleFor } from '../domain/lanes';
import { missingScopes, Scope } from '../domain/scopes';
import { AccessService } from '../keys/access.service';
import { DidRotationTracker } from '../limits/did-rotation';
import { Consumed, RateLimitStore, RateLimitStoreUnavailable } from '../limits/rate-limit.store';
import { AccessContext, AUTH_SCOPES, LANE_AWARE, THROTTLE_BUCKET } from './access-context';

type AccessRequest = FastifyRequest & { access?: AccessContext };

// One-shot hash: a Hash object per request cost more than the digest itself.
/** A per-IP bucket's identity: the address's network (an IPv6 address counts with its /64). */
export const ipIdentityKey = (ip: string) => `ip_${hash('sha256', clientNetwork(ip), 'hex').slice(0, 32)}`;

/**
 * Resolves the caller's lane (authenticated > agent > anonymous), enforces a route's scopes and
 * counts its throttle buckets. Routes with none of @Authenticated, @Throttle or @LaneAware
 * (health, docs) are left alone.
 */
interface RouteRules {
  scopes: Scope[] | undefined;
  bucket: BucketName | undefined;
  laneAware: boolean | undefined;
}

@Injectable()
export class AccessGuard implements CanActivate {
  private readonly rules = new WeakMap<object, WeakMap<object, RouteRules>>();

  constructor(
    private readonly reflector: Reflector,
    private readonly access: AccessService,
    private readonly limits: RateLimitStore,
    private readonly rotation: DidRotationTracker,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    @Optional() private readonly metrics?: Metrics,
  ) {}

  async canActivate(ctx: ExecutionContext): Promise<boolean> {
    const { scopes, bucket, laneAware } = this.routeRules(ctx);
    if (!scopes && !bucket && !laneAware) return true;

    const req = ctx.switchToHttp().getRequest<AccessRequest>();
    const reply = ctx.switchToHttp().getResponse<FastifyReply>();
    const access = await this.resolve(req, Boolean(laneAware && !bucket && !scopes));
    req.access = access;

    if (scopes) {
      if (!access.principal) throw new AppError('auth_required', 'This endpoint needs "Authorization: Bearer <API key>"', 401);
      const missing = missingScopes(access.principal.scopes, scopes);
      if (missing.length) throw new AppError('insufficient_scope', `This key lacks the scope ${missing.join(', ')}`, 403, { missing_scopes: missing });
    }
    if (this.config.RATE_LIMITS === 'off') return true;
    const counts: Consumed[] = [];
    const perKey: BucketRule = { limit: this.config.RATE_LIMIT_KEY_PER_MINUTE, windowSeconds: 60 };
    // Buckets are counted in order, the caller's own first, and a refused request spends nothing
    // further: refusals from one caller must not use up a bucket others share (the global mint
    // window, a per-IP issuance window).
    const refused = () => counts.some((c) => !c.allowed);
    if (access.principal && (scopes || bucket)) {
      const c = await this.count('key_window', access.principal.keyId, perKey, 'open', access.lane);
      if (c) counts.push(c);
    }
    if (bucket && !refused()) {
      const policy: BucketPolicy = BUCKETS[bucket];
      const rule = ruleFor(bucket, access.lane, perKey);
      if (rule && (policy.perIp || !(access.principal && !policy.authenticated))) {
        const c = await this.count(bucket, policy.perIp ? ipIdentityKey(access.ip) : access.identityKey, rule, policy.onStoreDown, access.lane);
        if (c) counts.push(c);
      }
      if (policy.global && !refused()) {
        const c = await this.count(`${bucket}:global`, 'global', policy.global, policy.onStoreDown, access.lane);
        if (c) counts.push(c);
      }
    }
    if (counts.length) this.answer(reply, counts);
    return true;
  }

  /** A route's decorators, read once per handler and class (metadata is fixed once the app is built). */
  private routeRules(ctx: ExecutionContext): RouteRules {
    const handler = ctx.getHandler();
    const cls = ctx.getClass();
    let byClass = this.rules.get(handler);
    if (!byClass) this.rules.set(handler, (byClass = new WeakMap()));
    let rules = byClass.get(cls);
    if (!rules) {
      const targets = [handler, cls];
      rules = {
        scopes: this.reflector.getAllAndOverride<Scope[] | undefined>(AUTH_SCOPES, targets),
        bucket: this.reflector.getAllAndOverride<BucketName | undefined>(THROTTLE_BUCKET, targets),
        laneAware: this.reflector.getAllAndOverride<boolean | undefined>(LANE_AWARE, targets),
      };
      byClass.set(cls, rules);
    }
    return rules;
  }

  /** Counts one request (a refusal in the metrics too); null when the store is down and the surface fails open. */
  private async count(bucket: string, key: string, rule: BucketRule, onStoreDown: 'open' | 'closed', lane: AccessContext['lane']): Promise<Consumed | null> {
    try {
      const consumed = await this.limits.consume(bucket, key, rule);
      if (!consumed.allowed) this.metrics?.rateLimitRejected(lane, bucket);
      return consumed;
    } catch (err) {
      if (!(err instanceof RateLimitStoreUnavailable)) throw err;
      this.logger.warn({ bucket, err: err.message, fail: onStoreDown }, 'rate-limit store unavailable');
      if (onStoreDown === 'open') return null;
      // The spec's headers on a 503 too: what is left is unknown, so none is promised before the retry.
      throw new AppError('rate_limiter_unavailable', 'Rate limiting is unavailable; retry shortly', 503, undefined, {
        'retry-after': '5',
        'ratelimit-limit': String(rule.limit),
        'ratelimit-remaining': '0',
        'ratelimit-reset': '5',
      });
    }
  }

  /** RateLimit-* headers from the tightest bucket; 429 with Retry-After if any bucket refused. */
  private answer(reply: FastifyReply, counts: Consumed[]): void {
    const refused = counts.filter((c) => !c.allowed);
    const shown = (refused.length ? refused : counts).reduce((a, b) => (b.remaining < a.remaining ? b : a));
    const reset = Math.max(1, shown.resetSeconds);
    reply.header('ratelimit-limit', String(shown.limit));
    reply.header('ratelimit-remaining', String(shown.remaining));
    reply.header('ratelimit-reset', String(reset));
    if (refused.length) {
      // Never earlier than the latest reset among the refusing buckets.
      const retryAfter = Math.max(...refused.map((c) => Math.max(1, c.resetSeconds)));
      throw new AppError('rate_limited', `Rate limit exceeded; retry in ${retryAfter} s`, 429, undefined, { 'retry-after': String(retryAfter) });
    }
  }

  private async resolve(req: AccessRequest, peekOnly: boolean): Promise<AccessContext> {
    const ip = req.ip;
    const auth = parseAuthorization(req.headers.authorization);
    if (auth.kind === 'malformed') throw new AppError('auth_required', `Malformed Authorization header: ${auth.reason}`, 401);
    if (auth.kind === 'key') {
      const principal = await this.access.authenticate(auth.key);
      if (!principal) throw new AppError('auth_required', 'Invalid, revoked or expired API key', 401);
      // The agent DID is ignored on authenticated requests.
      return { lane: 'authenticated', principal, identityKey: principal.keyId, ip, didStatus: null, didRotation: null };
    }
    const anonymous = (didStatus: AccessContext['didStatus'], didRotation: AccessContext['didRotation'] = null): AccessContext => ({
      lane: 'anonymous',
      principal: null,
      identityKey: ipIdentityKey(ip),
      ip,
      didStatus,
      didRotation,
    });
    const did = parseAgentDid(req.headers['x-agent-did']);
    if (did.kind === 'none') return anonymous(null);
    if (did.kind === 'rejected') return anonymous(`did_rejected:${did.reason}`);
    const key = didIdentityKey(did.did);
    let state;
    try {
      state = await this.rotation.admit(clientNetwork(ip), key, peekOnly);
    } catch (err) {
      if (!(err instanceof RateLimitStoreUnavailable)) throw err;
      // Cannot check the rotation cap: no agent privileges, but the request is served.
      return anonymous('did_rejected:rotation_check_unavailable');
    }
    const rotation = { unique: state.unique, max: state.max, windowSeconds: state.windowSeconds, resetAt: state.resetAt };
    if (!state.admitted) return anonymous('did_downgraded:per_ip_rotation_cap', rotation);
    return { lane: 'agent', principal: null, identityKey: key, ip, didStatus: 'did_accepted', didRotation: rotation };
  }
}
