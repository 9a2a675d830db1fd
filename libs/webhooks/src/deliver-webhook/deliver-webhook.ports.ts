import type { WebhookSigner } from '../domain/signing';
import type { SendResult } from '../sending/http-sender';

/** How an attempt reaches its receiver (HttpSender: SSRF-pinned HTTP with a timeout). */
export abstract class WebhookSender {
  abstract send(url: string, body: string, headers: Record<string, string>): Promise<SendResult>;
}

/** Signs v1a with the service's active key. */
export abstract class ServiceWebhookSigner implements WebhookSigner {
  abstract sign(message: Uint8Array): { key_id: string; signature: Uint8Array };
}

export const DELIVERY_OPTIONS = Symbol('DELIVERY_OPTIONS');

export interface DeliveryOptions {
  retryScheduleMs: readonly number[];
  disableAfterDays: number;
}
