import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '@app/core';
import { BucketName, BucketPolicy, BUCKETS, LANES, ruleFor } from '../domain/lanes';
import { BucketState, RateLimitStore, RateLimitStoreUnavailable } from '../limits/rate-limit.store';
import { AccessContext } from './access-context';

export interface QuotaBucket {
  limit: number;
  remaining: number;
  reset_seconds: number;
  window_seconds: number;
}

/** The `service.quota.v1` document: the caller's lane and buckets, read without counting. */
@Injectable()
export class QuotaService {
  constructor(
    private readonly limits: RateLimitStore,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async state(access: AccessContext) {
    const perKey = { limit: this.config.RATE_LIMIT_KEY_PER_MINUTE, windowSeconds: 60 };
    let degraded = false;
    const peek = async (bucket: string, key: string, rule: { limit: number; windowSeconds: number }): Promise<QuotaBucket> => {
      let s: BucketState;
      try {
        s = await this.limits.peek(bucket, key, rule);
      } catch (err) {
        if (!(err instanceof RateLimitStoreUnavailable)) throw err;
        degraded = true;
        s = { limit: rule.limit, remaining: rule.limit, resetSeconds: 0, windowSeconds: rule.windowSeconds };
      }
      return { limit: s.limit, remaining: s.remaining, reset_seconds: s.resetSeconds, window_seconds: s.windowSeconds };
    };
    // Authenticated callers count a surface without a rule of its own against their key's window.
    const subject = (bucket: Exclude<BucketName, 'notary_issue'>) => {
      const policy: BucketPolicy = BUCKETS[bucket];
      const own = Boolean(policy.authenticated) || !access.principal;
      return peek(own ? bucket : 'key_window', access.identityKey, ruleFor(bucket, access.lane, perKey)!);
    };
    // Read in parallel (one store round trip each), reported in this order.
    const [demo, verify, certificates, registry, badge, sandboxKey, sandboxKeyGlobal] = await Promise.all([
      subject('demo_window'),
      subject('public_verify_window'),
      subject('certificate_fetch_window'),
      subject('registry_list_window'),
      subject('badge_window'),
      subject('sandbox_key_daily'),
      peek('sandbox_key_daily:global', 'global', BUCKETS.sandbox_key_daily.global),
    ]);
    const buckets = {
      demo_window: demo,
      public_verify_window: verify,
      certificate_fetch_window: certificates,
      registry_list_window: registry,
      badge_window: badge,
      sandbox_key_daily: sandboxKey,
      sandbox_key_global_window: sandboxKeyGlobal,
    };
    return {
      schema_version: 'service.quota.v1',
      lane: access.lane,
      identity_key: access.identityKey,
      buckets,
      lanes_available: LANES,
      ...(access.didStatus ? { did_status: access.didStatus } : {}),
      ...(access.didRotation
        ? {
            agent_did_rotation: {
              unique_dids_in_window: access.didRotation.unique,
              max: access.didRotation.max,
              reset_at: access.didRotation.resetAt.toISOString(),
              window_seconds: access.didRotation.windowSeconds,
            },
          }
        : {}),
      ...(degraded ? { degraded: true } : {}),
    };
  }
}
