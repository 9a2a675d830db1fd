import { DynamicModule, Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { AppConfig, Redis, REDIS } from '@app/core';
import { EventStore, SqlDatabase } from '@app/event-store';
import { AccessReadModel } from '../keys/access-read-model.repository';
import { AccessService } from '../keys/access.service';
import { DidRotationTracker, MemoryDidRotationTracker, RedisDidRotationTracker } from '../limits/did-rotation';
import { MemoryRateLimitStore, RateLimitStore, RedisRateLimitStore } from '../limits/rate-limit.store';
import { AccessGuard } from './access.guard';
import { KeysController, QuotaController, SandboxKeysController } from './access.controllers';
import { DemoOrganization } from './demo-organization';
import { QuotaService } from './quota.service';

/**
 * Organizations, keys, lanes and limits. Counters live in Redis when REDIS_URL is set (shared
 * by every process), else in this process's memory.
 */
@Module({})
export class AccessModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: AccessModule,
      controllers: [SandboxKeysController, QuotaController, KeysController],
      providers: [
        { provide: AccessService, useFactory: (db: SqlDatabase, store: EventStore) => new AccessService(new AccessReadModel(db), store), inject: [SqlDatabase, EventStore] },
        {
          provide: RateLimitStore,
          useFactory: (redis: Redis | null) => (config.REDIS_URL && redis ? new RedisRateLimitStore(redis) : new MemoryRateLimitStore()),
          inject: [REDIS],
        },
        {
          provide: DidRotationTracker,
          useFactory: (redis: Redis | null) => (config.REDIS_URL && redis ? new RedisDidRotationTracker(redis) : new MemoryDidRotationTracker()),
          inject: [REDIS],
        },
        QuotaService,
        DemoOrganization,
        { provide: APP_GUARD, useClass: AccessGuard },
      ],
      exports: [AccessService],
    };
  }
}
