import type { AppConfig } from '@app/core';

/** The webhook part of the configuration (WEBHOOK_* variables). */
export interface WebhookSettings {
  allowPrivateTargets: boolean;
  timeoutMs: number;
  retryScheduleMs: number[];
  disableAfterDays: number;
  concurrency: number;
  queuePrefix: string;
  redisUrl?: string;
}

export const WEBHOOK_SETTINGS = Symbol('WEBHOOK_SETTINGS');

export const webhookSettings = (c: AppConfig): WebhookSettings => ({
  allowPrivateTargets: c.WEBHOOK_ALLOW_PRIVATE_TARGETS,
  timeoutMs: c.WEBHOOK_TIMEOUT_MS,
  retryScheduleMs: c.WEBHOOK_RETRY_SCHEDULE_MS,
  disableAfterDays: c.WEBHOOK_DISABLE_AFTER_DAYS,
  concurrency: c.WEBHOOK_CONCURRENCY,
  queuePrefix: c.WEBHOOK_QUEUE_PREFIX,
  redisUrl: c.REDIS_URL,
});
