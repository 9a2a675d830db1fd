import { DynamicModule, Module, Type } from '@nestjs/common';
import { AppConfig } from '@app/core';
import type { Logger } from '@app/http';
import { AccessModule, accessMigrations } from '@app/access';
import { certificateMigrations, NotaryModule, signingKeyMigrations } from '@app/notary';
import { PlatformModule } from '@app/platform';
import { HealthController } from './health/health.controller';

export interface AppModuleOptions {
  config: AppConfig;
  logger: Logger;
  /** Extra modules (tests add probes here). */
  imports?: Type[];
}

@Module({})
export class AppModule {
  static forRoot({ config, logger, imports = [] }: AppModuleOptions): DynamicModule {
    return {
      module: AppModule,
      imports: [
        PlatformModule.forRoot({ config, logger, migrations: [...accessMigrations, ...signingKeyMigrations, ...certificateMigrations] }),
        AccessModule.forRoot(config),
        NotaryModule.forRoot(config),
        ...imports,
      ],
      controllers: [HealthController],
    };
  }
}
