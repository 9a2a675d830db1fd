import { DynamicModule, Global, Module } from '@nestjs/common';
import { Metrics } from './metrics';
import { MetricsServer } from './metrics-server';

/**
 * The application's metrics registry (one per app) and, when METRICS_PORT is set, its listener.
 * PlatformModule imports it for the api and the worker alike; APP_CONFIG comes from there.
 */
@Global()
@Module({})
export class MetricsModule {
  static forRoot(metrics: Metrics): DynamicModule {
    return {
      module: MetricsModule,
      providers: [{ provide: Metrics, useValue: metrics }, MetricsServer],
      exports: [Metrics, MetricsServer],
    };
  }
}
