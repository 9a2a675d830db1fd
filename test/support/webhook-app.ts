import { isolatedEnv } from './isolated-env';
import { startTestApp, TestApp } from './test-app';
import { WebhookReceiver } from './webhook-receiver';

/**
 * The app in its own schema and queue prefix (isolatedEnv), with a webhook receiver on loopback
 * it may deliver to: what the suites that follow a transaction to its webhooks start with.
 */
export async function startWebhookApp(): Promise<{ t: TestApp; receiver: WebhookReceiver; close(): Promise<void> }> {
  const iso = await isolatedEnv();
  const receiver = await new WebhookReceiver().start();
  const t = await startTestApp({ ...iso.env, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_TIMEOUT_MS: '3000', RATE_LIMITS: 'off' });
  return {
    t,
    receiver,
    async close() {
      await t.close();
      await receiver.close();
      await iso.dispose();
    },
  };
}
