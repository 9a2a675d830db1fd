import { DynamicModule, Module } from '@nestjs/common';
import { AppConfig } from '@app/core';
import type { Logger } from '@app/http';
import { PlatformModule } from '@app/platform';

/** The background role: projections (and, as they land, webhook delivery and sweeps). No HTTP. */
@Module({})
export class WorkerModule {
  static forRoot(config: AppConfig, logger: Logger): DynamicModule {
    return { module: WorkerModule, imports: [PlatformModule.forRoot({ config, logger, runWorkers: true })] };
  }
}
