import { DynamicModule, Module } from '@nestjs/common';
import { AppConfig } from '@app/core';
import { ProjectionHost } from '@app/event-store';
import type { Logger } from '@app/http';
import { registryMigrations, registryProjection, signingKeyMigrations } from '@app/notary';
import { PlatformModule } from '@app/platform';
import { webhookMigrations, WebhooksModule } from '@app/webhooks';
import { CommerceModule, transactionMigrations, transactionsProjection } from '@app/commerce';
import { idempotencyMigrations } from '@app/idempotency';

const REGISTER_PROJECTIONS = Symbol('REGISTER_PROJECTIONS');

/** The background role: projections, webhook fan-out and delivery and the commerce expiry sweep. No HTTP. */
@Module({})
export class WorkerModule {
  static forRoot(config: AppConfig, logger: Logger): DynamicModule {
    return {
      module: WorkerModule,
      imports: [
        PlatformModule.forRoot({ config, logger, projections: [transactionsProjection], migrations: [...registryMigrations, ...signingKeyMigrations, ...webhookMigrations, ...transactionMigrations, ...idempotencyMigrations], runWorkers: true }),
        CommerceModule.forWorker(config),
        WebhooksModule.forRoot(config, { http: false, runWorkers: true }),
      ],
      providers: [{ provide: REGISTER_PROJECTIONS, useFactory: (host: ProjectionHost) => host.register(registryProjection), inject: [ProjectionHost] }],
    };
  }
}
