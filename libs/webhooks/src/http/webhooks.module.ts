import { BeforeApplicationShutdown, DynamicModule, Module, OnApplicationBootstrap } from '@nestjs/common';
import { CommandBus, CqrsModule } from '@nestjs/cqrs';
import { AppConfig, KEY_ENCRYPTION_KEY, LOGGER, systemClock } from '@app/core';
import { EventStore, SqlDatabase } from '@app/event-store';
import { IdempotencyModule } from '@app/idempotency';
import type { Logger } from '@app/http';
import { Metrics } from '@app/metrics';
import { SigningKeysModule } from '@app/notary';
import { CreateEndpointController } from '../create-endpoint/create-endpoint.controller';
import { CreateEndpointHandler } from '../create-endpoint/create-endpoint.handler';
import { DeleteEndpointController } from '../delete-endpoint/delete-endpoint.controller';
import { DeleteEndpointHandler } from '../delete-endpoint/delete-endpoint.handler';
import { DeliverWebhookHandler } from '../deliver-webhook/deliver-webhook.handler';
import { DELIVERY_OPTIONS, ServiceWebhookSigner, WebhookSender } from '../deliver-webhook/deliver-webhook.ports';
import { DeliveryBacklog } from '../delivery/delivery-backlog.repository';
import { DeliveryRepository } from '../delivery/delivery.repository';
import { DeliveryRows, SqlDeliveryRows } from '../delivery/delivery-rows.repository';
import { EndpointCache } from '../endpoints/endpoint-cache';
import { EndpointChanges } from '../endpoints/endpoint-changes.repository';
import { EndpointRepository } from '../endpoints/endpoint.repository';
import { EndpointRows, SqlEndpointRows } from '../endpoints/endpoint-rows.repository';
import { EndpointSecrets, SqlEndpointSecrets } from '../endpoints/endpoint-secrets.repository';
import { SendTargets } from '../endpoints/send-targets';
import { TargetCheck } from '../endpoints/target-check';
import { GetDeliveryHandler, ListDeliveriesHandler } from '../query-deliveries/delivery.queries';
import { QueryDeliveriesController } from '../query-deliveries/query-deliveries.controller';
import { GetEndpointHandler, ListEndpointsHandler } from '../query-endpoints/endpoint.queries';
import { QueryEndpointsController } from '../query-endpoints/query-endpoints.controller';
import { BullMqDeliveryQueue } from '../queue/bullmq-queue';
import { DeliveryQueue } from '../queue/delivery-queue.port';
import { StoreScheduler } from '../queue/store-scheduler';
import { RecoverDeliveriesController } from '../recover-deliveries/recover-deliveries.controller';
import { RecoverDeliveriesHandler } from '../recover-deliveries/recover-deliveries.handler';
import { RedeliverDeliveryController } from '../redeliver-delivery/redeliver-delivery.controller';
import { RedeliverDeliveryHandler } from '../redeliver-delivery/redeliver-delivery.handler';
import { RotateEndpointSecretController } from '../rotate-endpoint-secret/rotate-endpoint-secret.controller';
import { RotateEndpointSecretHandler } from '../rotate-endpoint-secret/rotate-endpoint-secret.handler';
import { FanOutCheckpoint } from '../schedule-deliveries/fan-out-checkpoint.repository';
import { FanOutRunner } from '../schedule-deliveries/fan-out.runner';
import { ScheduleDeliveriesCommand } from '../schedule-deliveries/schedule-deliveries.command';
import { ScheduleDeliveriesHandler } from '../schedule-deliveries/schedule-deliveries.handler';
import { HttpSender } from '../sending/http-sender';
import { TargetGuard } from '../sending/target-guard';
import { TestEndpointController } from '../test-endpoint/test-endpoint.controller';
import { TestEndpointHandler } from '../test-endpoint/test-endpoint.handler';
import { UpdateEndpointController } from '../update-endpoint/update-endpoint.controller';
import { UpdateEndpointHandler } from '../update-endpoint/update-endpoint.handler';
import { RUN_WEBHOOK_WORKERS, ServiceSigner, WebhookWorker } from '../webhook-worker';
import { WEBHOOK_SETTINGS, webhookSettings, WebhookSettings } from '../webhook-settings';
import { WEBHOOKS_CLOCK } from '../webhooks.tokens';

export interface WebhooksModuleOptions {
  /** Serve the HTTP API (the api app); the worker app has none. */
  http?: boolean;
  /** Run fan-out and delivery here (default: WORKERS=on). */
  runWorkers?: boolean;
}

/** In the order of the API document. */
const CONTROLLERS = [
  CreateEndpointController,
  QueryEndpointsController,
  UpdateEndpointController,
  DeleteEndpointController,
  RotateEndpointSecretController,
  TestEndpointController,
  RecoverDeliveriesController,
  QueryDeliveriesController,
  RedeliverDeliveryController,
];

const HANDLERS = [
  CreateEndpointHandler,
  UpdateEndpointHandler,
  DeleteEndpointHandler,
  RotateEndpointSecretHandler,
  TestEndpointHandler,
  DeliverWebhookHandler,
  ScheduleDeliveriesHandler,
  RedeliverDeliveryHandler,
  RecoverDeliveriesHandler,
  ListEndpointsHandler,
  GetEndpointHandler,
  ListDeliveriesHandler,
  GetDeliveryHandler,
];

/**
 * Webhooks: endpoints, fan-out of commerce events to deliveries, signed delivery with retries
 * (BullMQ with REDIS_URL, else the store scheduler), delivery history and redelivery. Use cases
 * on the CommandBus/QueryBus; repositories write through the EventStore port with the endpoints
 * and deliveries projections.
 */
@Module({})
export class WebhooksModule implements OnApplicationBootstrap, BeforeApplicationShutdown {
  constructor(private readonly worker: WebhookWorker) {}

  static forRoot(config: AppConfig, options: WebhooksModuleOptions = {}): DynamicModule {
    const settings = webhookSettings(config);
    return {
      module: WebhooksModule,
      imports: [CqrsModule, SigningKeysModule, IdempotencyModule.forRoot()],
      controllers: options.http === false ? [] : CONTROLLERS,
      providers: [
        { provide: WEBHOOK_SETTINGS, useValue: settings },
        { provide: RUN_WEBHOOK_WORKERS, useValue: options.runWorkers ?? config.WORKERS === 'on' },
        { provide: WEBHOOKS_CLOCK, useValue: systemClock },
        { provide: DELIVERY_OPTIONS, useValue: { retryScheduleMs: settings.retryScheduleMs, disableAfterDays: settings.disableAfterDays } },
        { provide: TargetGuard, useFactory: () => new TargetGuard(settings.allowPrivateTargets) },
        { provide: TargetCheck, useFactory: (guard: TargetGuard) => new TargetCheck(guard), inject: [TargetGuard] },
        { provide: HttpSender, useFactory: (guard: TargetGuard) => new HttpSender(guard, settings.timeoutMs), inject: [TargetGuard] },
        { provide: WebhookSender, useExisting: HttpSender },
        ServiceSigner,
        { provide: ServiceWebhookSigner, useExisting: ServiceSigner },
        { provide: EndpointChanges, useFactory: (db: SqlDatabase) => new EndpointChanges(db), inject: [SqlDatabase] },
        { provide: EndpointRepository, useFactory: (store: EventStore, changes: EndpointChanges) => new EndpointRepository(store, changes), inject: [EventStore, EndpointChanges] },
        { provide: EndpointRows, useFactory: (db: SqlDatabase) => new SqlEndpointRows(db), inject: [SqlDatabase] },
        { provide: EndpointSecrets, useFactory: (db: SqlDatabase, kek: Buffer) => new SqlEndpointSecrets(db, kek), inject: [SqlDatabase, KEY_ENCRYPTION_KEY] },
        { provide: SendTargets, useFactory: (rows: EndpointRows, secrets: EndpointSecrets) => new SendTargets(rows, secrets, systemClock), inject: [EndpointRows, EndpointSecrets] },
        {
          provide: EndpointCache,
          useFactory: (changes: EndpointChanges, targets: SendTargets) => {
            const cache = new EndpointCache(changes, (id) => targets.load(id));
            changes.onChange(() => cache.clear()); // this process at once; others through NOTIFY
            return cache;
          },
          inject: [EndpointChanges, SendTargets],
        },
        {
          provide: DeliveryRepository,
          useFactory: (store: EventStore, logger?: Logger) => new DeliveryRepository(store, logger),
          inject: [EventStore, { token: LOGGER, optional: true }],
        },
        { provide: DeliveryRows, useFactory: (db: SqlDatabase) => new SqlDeliveryRows(db), inject: [SqlDatabase] },
        {
          provide: DeliveryQueue,
          useFactory: (rows: DeliveryRows, s: WebhookSettings, logger?: Logger) =>
            s.redisUrl
              ? new BullMqDeliveryQueue(s.redisUrl, s.queuePrefix, rows, { concurrency: s.concurrency, timeoutMs: s.timeoutMs }, logger)
              : new StoreScheduler(rows, s.concurrency, s.timeoutMs + 30_000, logger),
          inject: [DeliveryRows, WEBHOOK_SETTINGS, { token: LOGGER, optional: true }],
        },
        {
          provide: FanOutRunner,
          useFactory: (store: EventStore, db: SqlDatabase, commands: CommandBus, logger?: Logger) =>
            new FanOutRunner(store, new FanOutCheckpoint(db), (events) => commands.execute(new ScheduleDeliveriesCommand(events)), logger),
          inject: [EventStore, SqlDatabase, CommandBus, { token: LOGGER, optional: true }],
        },
        {
          // The backlog gauges of /metrics, read when scraped.
          provide: DeliveryBacklog,
          useFactory: (db: SqlDatabase, metrics?: Metrics) => {
            const backlog = new DeliveryBacklog(db);
            metrics?.setWebhookBacklogProbe(() => backlog.read());
            return backlog;
          },
          inject: [SqlDatabase, { token: Metrics, optional: true }],
        },
        ...HANDLERS,
        WebhookWorker,
      ],
      exports: [DeliveryQueue, WebhookWorker, EndpointRepository, DeliveryRepository],
    };
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.worker.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.worker.stop();
  }
}
