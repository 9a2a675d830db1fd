import { Inject, Injectable, Optional } from '@nestjs/common';
import { Redis, REDIS } from '@app/core';
import { EventStore } from '@app/event-store';
import { Lifecycle } from './lifecycle';

export type CheckStatus = 'up' | 'down' | 'not_configured';

export interface Readiness {
  ready: boolean;
  checks: { store: CheckStatus; redis: CheckStatus; draining: boolean };
  errors: string[];
}

const withTimeout = <T>(p: Promise<T>, ms: number, what: string) =>
  Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms).unref())]);

@Injectable()
export class ReadinessService {
  constructor(
    private readonly store: EventStore,
    private readonly lifecycle: Lifecycle,
    @Optional() @Inject(REDIS) private readonly redis: Redis | null,
  ) {}

  async check(timeoutMs = 2000): Promise<Readiness> {
    const errors: string[] = [];
    const probe = async (what: string, fn: () => Promise<unknown>): Promise<CheckStatus> => {
      try {
        await withTimeout(fn(), timeoutMs, what);
        return 'up';
      } catch (err) {
        errors.push(`${what}: ${(err as Error).message}`);
        return 'down';
      }
    };
    const [store, redis] = await Promise.all([
      probe('store', () => this.store.ping()),
      this.redis ? probe('redis', () => this.redis!.ping()) : Promise.resolve<CheckStatus>('not_configured'),
    ]);
    const draining = this.lifecycle.draining;
    if (draining) errors.push('shutting down');
    return { ready: store === 'up' && redis !== 'down' && !draining, checks: { store, redis, draining }, errors };
  }
}
