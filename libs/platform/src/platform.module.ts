import { DynamicModule, Global, Inject, Module, OnApplicationShutdown, Optional } from '@nestjs/common';
import { APP_CONFIG, AppConfig, createRedis, KEY_ENCRYPTION_KEY, LOGGER, Redis, REDIS, resolveKeyEncryptionKey } from '@app/core';
import { EventStoreModule, InlineProjection, Migration, ProjectionHost, SqlDatabase } from '@app/event-store';
import type { Logger } from '@app/http';
import { Metrics, metricsExposure, MetricsModule } from '@app/metrics';
import { Lifecycle } from './lifecycle';
import { ReadinessService } from './readiness';

export interface PlatformOptions {
  config: AppConfig;
  logger: Logger;
  /** Read-model migrations contributed by the capability libs. */
  migrations?: Migration[];
  /** Inline read models contributed by the capability libs. */
  projections?: InlineProjection[];
  /** Run projections and other background work here (default: WORKERS=on). */
  runWorkers?: boolean;
}

/**
 * Wiring shared by the api and worker processes: validated config, logger, the event store
 * (postgres or embedded, picked from config here and nowhere else), Redis when configured,
 * and the key-encryption key.
 */
const METRICS_PROBES = Symbol('METRICS_PROBES');

@Global()
@Module({})
export class PlatformModule implements OnApplicationShutdown {
  constructor(@Optional() @Inject(REDIS) private readonly redis: Redis | null) {}

  static forRoot({ config, logger, migrations, projections, runWorkers }: PlatformOptions): DynamicModule {
    // One registry per application (tests start several in one process); the process metrics
    // (an event-loop delay monitor, a GC observer) and append timing only where metrics are served.
    const served = metricsExposure(config).mode !== 'off';
    const metrics = new Metrics({ defaultMetrics: served });
    return {
      module: PlatformModule,
      imports: [
        MetricsModule.forRoot(metrics),
        EventStoreModule.forRoot({
          databaseUrl: config.DATABASE_URL,
          dataDir: config.DATA_DIR,
          migrations,
          projections,
          // WORKERS=off: this process serves HTTP only; `start:worker` processes run projections.
          runProjections: runWorkers ?? config.WORKERS === 'on',
          onAppend: served ? (method, seconds) => metrics.eventStoreAppend(method, seconds) : undefined,
        }),
      ],
      providers: [
        { provide: APP_CONFIG, useValue: config },
        { provide: LOGGER, useValue: logger },
        { provide: KEY_ENCRYPTION_KEY, useFactory: () => resolveKeyEncryptionKey(config) },
        {
          provide: REDIS,
          useFactory: async () => {
            if (!config.REDIS_URL) return null;
            const redis = createRedis(config.REDIS_URL);
            // Start even if Redis is down: /readyz reports it, and it reconnects by itself.
            await redis.connect().catch((err: Error) => logger.warn({ err: err.message }, 'redis not reachable at start'));
            return redis;
          },
        },
        Lifecycle,
        ReadinessService,
        {
          // What the store knows, read when scraped: the pool, and how far checkpointed readers lag.
          provide: METRICS_PROBES,
          useFactory: (db: SqlDatabase, host: ProjectionHost) => {
            metrics.setPoolProbe(() => db.poolStats());
            metrics.addProjectionLagProbe(() => host.lag());
            return true;
          },
          inject: [SqlDatabase, ProjectionHost],
        },
      ],
      exports: [APP_CONFIG, LOGGER, KEY_ENCRYPTION_KEY, REDIS, Lifecycle, ReadinessService],
    };
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.redis) await this.redis.quit().catch(() => this.redis?.disconnect());
  }
}
