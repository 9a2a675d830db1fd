import { Inject, Injectable, Optional } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { LOGGER } from '@app/core';
import type { Logger } from '@app/http';
import { SigningKeyStore } from '@app/notary';
import { DeliverWebhookCommand } from './deliver-webhook/deliver-webhook.command';
import { ServiceWebhookSigner } from './deliver-webhook/deliver-webhook.ports';
import { EndpointCache } from './endpoints/endpoint-cache';
import { DeliveryQueue, RunResult } from './queue/delivery-queue.port';
import { FanOutRunner } from './schedule-deliveries/fan-out.runner';
import { HttpSender } from './sending/http-sender';

/** Signs v1a with the service's active key (the process's signing-key ring, which follows rotations). */
@Injectable()
export class ServiceSigner extends ServiceWebhookSigner {
  constructor(private readonly keys: SigningKeyStore) {
    super();
  }

  sign(message: Uint8Array) {
    return this.keys.current.sign(message);
  }
}

export const RUN_WEBHOOK_WORKERS = Symbol('RUN_WEBHOOK_WORKERS');

/** The delivery role of a process: fans commerce events out to deliveries and runs the queue's attempts (when workers run here). */
@Injectable()
export class WebhookWorker {
  private running = false;

  constructor(
    private readonly queue: DeliveryQueue,
    private readonly commands: CommandBus,
    private readonly fanOut: FanOutRunner,
    private readonly sender: HttpSender,
    private readonly targets: EndpointCache,
    @Inject(RUN_WEBHOOK_WORKERS) private readonly enabled: boolean,
    @Optional() @Inject(LOGGER) private readonly logger?: Logger,
  ) {}

  async start(): Promise<void> {
    if (!this.enabled || this.running) return;
    await this.targets.start();
    await this.queue.start((id, series) => this.commands.execute<DeliverWebhookCommand, RunResult>(new DeliverWebhookCommand(id, series)));
    this.fanOut.start();
    this.running = true;
    this.logger?.info('webhook delivery worker running');
  }

  async stop(): Promise<void> {
    await this.fanOut.stop();
    await this.queue.stop();
    await this.targets.stop();
    this.sender.close();
  }
}
