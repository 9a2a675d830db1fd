import 'reflect-metadata';
import { resolve } from 'node:path';
import { CommandBus } from '@nestjs/cqrs';
import { AccessService } from '@app/access';
import { ConfigError, loadConfig } from '@app/core';
import { SigningKeyStore } from '@app/notary';
import { createLogger } from '@app/http';
import { MetricsServer } from '@app/metrics';
import { Lifecycle } from '@app/platform';
import { createApp } from './create-app';
import { OperatorChannel, serveOperatorChannel } from '../../cli/src/operator-channel';

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`sigil: ${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
  const logger = createLogger(config.LOG_LEVEL);
  const app = await createApp(config, { logger });
  await app.listen({ port: config.PORT, host: config.HOST });

  // Embedded mode: this process holds DATA_DIR, so the admin CLI runs its commands in here,
  // through a Unix socket only this user can open (apps/cli/src/operator-channel.ts).
  let operator: OperatorChannel | null = null;
  if (config.storeMode === 'embedded') {
    const bus = app.get(CommandBus);
    operator = await serveOperatorChannel(
      config.DATA_DIR,
      {
        access: app.get(AccessService),
        baseUrl: config.BASE_URL,
        dispatch: (command) => bus.execute(command as never),
        signingKeys: async () => app.get(SigningKeyStore),
      },
      logger,
    ).catch((err: unknown) => {
      logger.warn({ err }, 'operator channel off: the admin CLI will ask to stop the server');
      return null;
    });
  }

  const where = config.storeMode === 'embedded' ? `embedded PGlite in ${resolve(config.DATA_DIR)}` : 'PostgreSQL';
  logger.info({ base_url: config.BASE_URL, store: config.storeMode, redis: Boolean(config.REDIS_URL), metrics_port: app.get(MetricsServer).port }, 'sigil api listening');
  process.stderr.write(
    `\nSigil is running at ${config.BASE_URL} (${where}).\n` +
      `  Health:   ${config.BASE_URL}/healthz   Ready: ${config.BASE_URL}/readyz\n` +
      `  API docs: ${config.BASE_URL}/docs   (OpenAPI: ${config.BASE_URL}/openapi.json)\n` +
      `  Sandbox key: curl -X POST ${config.BASE_URL}/api/sandbox/keys\n\n`,
  );

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: finishing in-flight requests');
    app.get(Lifecycle).startDraining();
    const timer = setTimeout(() => {
      logger.error({ grace_ms: config.SHUTDOWN_GRACE_MS }, 'grace period over; exiting with requests unfinished');
      process.exit(1);
    }, config.SHUTDOWN_GRACE_MS);
    timer.unref();
    try {
      await operator?.close();
      await app.close(); // stops accepting, waits for in-flight requests, then closes the store
      logger.info('stopped');
      process.exit(0);
    } catch (err) {
      logger.error({ err }, 'shutdown failed');
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((err) => {
  process.stderr.write(`sigil: failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
