import { DynamicModule, Module, Type } from '@nestjs/common';
import { AppConfig } from '@app/core';
import type { Logger } from '@app/http';
import { AccessModule, accessMigrations } from '@app/access';
import { certificateMigrations, creditMigrations, NotaryModule, notaryProjections, registryMigrations, signingKeyMigrations } from '@app/notary';
import { settlementMigrations, type SettlementProvider } from '@app/settlement';
import { PlatformModule } from '@app/platform';
import { webhookMigrations, WebhooksModule } from '@app/webhooks';
import { CommerceModule, policiesProjection, policyMigrations, transactionMigrations, transactionsProjection } from '@app/commerce';
import { idempotencyMigrations } from '@app/idempotency';
import { consoleMigrations, ConsoleModule, consoleProjection } from '@app/console';
import { HealthController } from './health/health.controller';

export interface AppModuleOptions {
  config: AppConfig;
  logger: Logger;
  /** Extra modules (tests add probes here). */
  imports?: Type[];
  settlementProvider?: SettlementProvider;
}

@Module({})
export class AppModule {
  static forRoot({ config, logger, imports = [], settlementProvider }: AppModuleOptions): DynamicModule {
    // One instance of each: the console imports these very modules for the services it calls.
    const access = AccessModule.forRoot(config);
    const commerce = CommerceModule.forRoot(config, { settlementProvider });
    return {
      module: AppModule,
      imports: [
        PlatformModule.forRoot({ config, logger, projections: [...notaryProjections, transactionsProjection, policiesProjection, consoleProjection], migrations: [...accessMigrations, ...signingKeyMigrations, ...certificateMigrations, ...creditMigrations, ...registryMigrations, ...webhookMigrations, ...policyMigrations, ...transactionMigrations, ...idempotencyMigrations, ...settlementMigrations, ...consoleMigrations] }),
        access,
        NotaryModule.forRoot(config, { settlementProvider }),
        WebhooksModule.forRoot(config),
        commerce,
        ConsoleModule.forRoot(config, { access, commerce }),
        ...imports,
      ],
      controllers: [HealthController],
    };
  }
}
