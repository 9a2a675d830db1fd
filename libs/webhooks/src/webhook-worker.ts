import { Inject, Injectable, Optional } from '@nestjs/common';
import { LOGGER } from '@app/core';
import type { Logger } from '@app/http';
import { SigningKeyStore } from '@app/notary';
import type { WebhookSigner } from './domain/signing';
import { DeliveryProcessor } from './delivery/delivery.processor';
import { EndpointCache } from './endpoints/endpoint-cache';
import { DeliveryQueue } from './queue/delivery-queue.port';
import { HttpSender } from './sending/http-sender';

/** Signs v1a with the service's active key (the process's signing-key ring, which follows rotations). */
@Injectable()
export class ServiceSigner implements WebhookSigner {
  constructor(private readonly keys: SigningKeyStore) {}

  sign(message: Uint8Array) {
    return this.keys.current.sign(message);
  }
}

export const RUN_WEBHOOK_WORKERS = Symbol('RUN_WEBHOOK_WORKERS');

/** The delivery role of a process: runs the queue's attempts (when workers run here). */
@Injectable()
export class WebhookWorker {
  private running = false;

  constructor(
    private readonly queue: DeliveryQueue,
    private readonly processor: DeliveryProcessor,
    private readonly signer: ServiceSigner,
    private readonly sender: HttpSender,
    private readonly targets: EndpointCache,
    @Inject(RUN_WEBHOOK_WORKERS) private readonly enabled: boolean,
    @Optional() @Inject(LOGGER) private readonly logger?: Logger,
  ) {}

  async start(): Promise<void> {
    if (!this.enabled || this.running) return;
    await this.targets.start();
    await this.queue.start((id, series) => this.processor.run(id, series));
    this.running = true;
    this.logger?.info('webhook delivery worker running');
  }

  async stop(): Promise<void> {
    await this.queue.stop();
    await this.targets.stop();
    this.sender.close();
  }
}
