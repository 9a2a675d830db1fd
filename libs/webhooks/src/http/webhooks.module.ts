import { BeforeApplicationShutdown, DynamicModule, Module, OnApplicationBootstrap } from '@nestjs/common';
import { AppConfig, KEY_ENCRYPTION_KEY, LOGGER } from '@app/core';
import { ProjectionHost, SqlDatabase, SqlEventStore } from '@app/event-store';
import type { Logger } from '@app/http';
import { DeliveryProcessor } from '../delivery/delivery.processor';
import { DeliveryRepository } from '../delivery/delivery.repository';
import { DeliveryService } from '../delivery/delivery.service';
import { fanOutProjection } from '../delivery/fan-out.projection';
import { EndpointCache } from '../endpoints/endpoint-cache';
import { EndpointService } from '../endpoints/endpoint.service';
import { BullMqDeliveryQueue } from '../queue/bullmq-queue';
import { DeliveryQueue } from '../queue/delivery-queue.port';
import { StoreScheduler } from '../queue/store-scheduler';
import { HttpSender } from '../sending/http-sender';
import { TargetGuard } from '../sending/target-guard';
import { SigningKeysModule } from '@app/notary';
import { RUN_WEBHOOK_WORKERS, ServiceSigner, WebhookWorker } from '../webhook-worker';
import { WEBHOOK_SETTINGS, webhookSettings, WebhookSettings } from '../webhook-settings';
import { WebhooksController } from './webhooks.controller';

export interface WebhooksModuleOptions {
  /** Serve the HTTP API (the api app); the worker app has none. */
  http?: boolean;
  /** Run fan-out and delivery here (default: WORKERS=on). */
  runWorkers?: boolean;
}

/**
 * Webhooks: endpoints, fan-out of commerce events to deliveries, signed delivery with retries
 * (BullMQ with REDIS_URL, else the store scheduler), delivery history and redelivery.
 */
@Module({})
export class WebhooksModule implements OnApplicationBootstrap, BeforeApplicationShutdown {
  constructor(
    projections: ProjectionHost,
    deliveries: DeliveryRepository,
    private readonly queue: DeliveryQueue,
    private readonly worker: WebhookWorker,
  ) {
    projections.register(fanOutProjection(deliveries, (due) => queue.enqueue(due)));
  }

  static forRoot(config: AppConfig, options: WebhooksModuleOptions = {}): DynamicModule {
    const settings = webhookSettings(config);
    return {
      module: WebhooksModule,
      imports: [SigningKeysModule],
      controllers: options.http === false ? [] : [WebhooksController],
      providers: [
        { provide: WEBHOOK_SETTINGS, useValue: settings },
        { provide: RUN_WEBHOOK_WORKERS, useValue: options.runWorkers ?? config.WORKERS === 'on' },
        { provide: TargetGuard, useFactory: () => new TargetGuard(settings.allowPrivateTargets) },
        { provide: HttpSender, useFactory: (guard: TargetGuard) => new HttpSender(guard, settings.timeoutMs), inject: [TargetGuard] },
        {
          provide: EndpointService,
          useFactory: (db: SqlDatabase, store: SqlEventStore, kek: Buffer, guard: TargetGuard) => new EndpointService(db, store, kek, guard),
          inject: [SqlDatabase, SqlEventStore, KEY_ENCRYPTION_KEY, TargetGuard],
        },
        {
          provide: EndpointCache,
          useFactory: (db: SqlDatabase, endpoints: EndpointService) => {
            const cache = new EndpointCache(db, (id) => endpoints.sendTarget(id));
            endpoints.onChange(() => cache.clear()); // this process at once; others through NOTIFY
            return cache;
          },
          inject: [SqlDatabase, EndpointService],
        },
        { provide: DeliveryRepository, useFactory: (db: SqlDatabase, store: SqlEventStore) => new DeliveryRepository(db, store), inject: [SqlDatabase, SqlEventStore] },
        {
          provide: DeliveryQueue,
          useFactory: (deliveries: DeliveryRepository, s: WebhookSettings, logger?: Logger) =>
            s.redisUrl
              ? new BullMqDeliveryQueue(s.redisUrl, s.queuePrefix, deliveries, { concurrency: s.concurrency, timeoutMs: s.timeoutMs }, logger)
              : new StoreScheduler(deliveries, s.concurrency, s.timeoutMs + 30_000, logger),
          inject: [DeliveryRepository, WEBHOOK_SETTINGS, { token: LOGGER, optional: true }],
        },
        ServiceSigner,
        {
          provide: DeliveryProcessor,
          useFactory: (
            db: SqlDatabase,
            store: SqlEventStore,
            deliveries: DeliveryRepository,
            endpoints: EndpointService,
            targets: EndpointCache,
            sender: HttpSender,
            signer: ServiceSigner,
            logger?: Logger,
          ) =>
            new DeliveryProcessor(db, store, deliveries, endpoints, targets, sender, signer, { retryScheduleMs: settings.retryScheduleMs, disableAfterDays: settings.disableAfterDays }, logger),
          inject: [SqlDatabase, SqlEventStore, DeliveryRepository, EndpointService, EndpointCache, HttpSender, ServiceSigner, { token: LOGGER, optional: true }],
        },
        {
          provide: DeliveryService,
          useFactory: (db: SqlDatabase, store: SqlEventStore, deliveries: DeliveryRepository, endpoints: EndpointService, queue: DeliveryQueue) =>
            new DeliveryService(db, store, deliveries, endpoints, queue),
          inject: [SqlDatabase, SqlEventStore, DeliveryRepository, EndpointService, DeliveryQueue],
        },
        WebhookWorker,
      ],
      exports: [EndpointService, DeliveryService, DeliveryRepository, DeliveryQueue, WebhookWorker],
    };
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.worker.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.worker.stop();
  }
}

