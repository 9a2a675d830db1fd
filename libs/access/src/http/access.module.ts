import { DynamicModule, Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { CqrsModule } from '@nestjs/cqrs';
import { AppConfig, Redis, REDIS } from '@app/core';
import { EventStore, SqlDatabase } from '@app/event-store';
import { CreateApiKeyController } from '../create-api-key/create-api-key.controller';
import { CreateApiKeyHandler } from '../create-api-key/create-api-key.handler';
import { CreateOrganizationHandler } from '../create-organization/create-organization.handler';
import { CreateSandboxKeyController } from '../create-sandbox-key/create-sandbox-key.controller';
import { CreateSandboxKeyHandler } from '../create-sandbox-key/create-sandbox-key.handler';
import { RevokeApiKeyController } from '../revoke-api-key/revoke-api-key.controller';
import { RevokeApiKeyHandler } from '../revoke-api-key/revoke-api-key.handler';
import { AccessQueries } from '../keys/access-queries';
import { AccessReadModel } from '../keys/access-read-model.repository';
import { AccessService } from '../keys/access.service';
import { OrganizationRepository } from '../keys/organization.repository';
import { DidRotationTracker, MemoryDidRotationTracker, RedisDidRotationTracker } from '../limits/did-rotation';
import { MemoryRateLimitStore, RateLimitStore, RedisRateLimitStore } from '../limits/rate-limit.store';
import { AccessGuard } from './access.guard';
import { KeysController, QuotaController } from './access.controllers';
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
      imports: [CqrsModule],
      controllers: [CreateSandboxKeyController, QuotaController, KeysController, CreateApiKeyController, RevokeApiKeyController],
      providers: [
        { provide: AccessQueries, useFactory: (db: SqlDatabase) => new AccessReadModel(db), inject: [SqlDatabase] },
        { provide: OrganizationRepository, useFactory: (store: EventStore) => new OrganizationRepository(store), inject: [EventStore] },
        CreateOrganizationHandler,
        CreateApiKeyHandler,
        RevokeApiKeyHandler,
        CreateSandboxKeyHandler,
        { provide: AccessService, useFactory: (reads: AccessQueries, store: EventStore) => new AccessService(reads, store), inject: [AccessQueries, EventStore] },
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
      exports: [AccessService, RateLimitStore],
    };
  }
}
