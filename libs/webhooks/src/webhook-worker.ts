import { Inject, Injectable, Optional } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { KEY_ENCRYPTION_KEY, LOGGER } from '@app/core';
import { SqlDatabase, SqlEventStore } from '@app/event-store';
import type { Logger } from '@app/http';
import { SigningKeyStore } from '@app/notary';
import type { WebhookSigner } from './domain/signing';
import { DeliveryProcessor } from './delivery/delivery.processor';
import { EndpointCache } from './endpoints/endpoint-cache';
import { DeliveryQueue } from './queue/delivery-queue.port';
import { HttpSender } from './sending/http-sender';

/**
 * Signs v1a with the service's active key: the notary's SigningKeyStore where the app has one
 * (the api), else one of our own (the worker app), which follows rotations the same way.
 */
@Injectable()
export class ServiceSigner implements WebhookSigner {
  private keys: SigningKeyStore | null = null;
  private own = false;

  constructor(
    private readonly moduleRef: ModuleRef,
    private readonly db: SqlDatabase,
    private readonly store: SqlEventStore,
    @Inject(KEY_ENCRYPTION_KEY) private readonly kek: Buffer,
  ) {}

  async start(): Promise<void> {
    if (this.keys) return;
    try {
      this.keys = this.moduleRef.get(SigningKeyStore, { strict: false });
    } catch {
      this.keys = new SigningKeyStore(this.db, this.store, this.kek);
      this.own = true;
      await this.keys.start();
    }
  }

  sign(message: Uint8Array) {
    if (!this.keys) throw new Error('ServiceSigner.start() has not run');
    return this.keys.current.sign(message);
  }

  async stop(): Promise<void> {
    if (this.own) await this.keys?.stop();
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
    await this.signer.start();
    await this.targets.start();
    await this.queue.start((id, series) => this.processor.run(id, series));
    this.running = true;
    this.logger?.info('webhook delivery worker running');
  }

  async stop(): Promise<void> {
    await this.queue.stop();
    await this.targets.stop();
    this.sender.close();
    await this.signer.stop();
  }
}
