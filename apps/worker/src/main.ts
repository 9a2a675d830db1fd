import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { ConfigError, loadConfig } from '@app/core';
import { ProjectionHost } from '@app/event-store';
import { createLogger, PinoNestLogger } from '@app/http';
import { MetricsServer } from '@app/metrics';
import { WorkerModule } from './worker.module';

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
    // Workers beside api processes must share their database and queue; an embedded store
    // belongs to exactly one process (`npm start` runs the workers in-process instead).
    const missing = (['DATABASE_URL', 'REDIS_URL'] as const).filter((v) => !config![v]);
    if (missing.length) throw new ConfigError(missing.map((variable) => ({ variable, message: 'is required by start:worker' })));
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`sigil worker: ${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
  const logger = createLogger(config.LOG_LEVEL, 'sigil-worker');
  const app = await NestFactory.createApplicationContext(WorkerModule.forRoot(config, logger), { logger: new PinoNestLogger(logger) });
  await app.init();
  logger.info({ projections: app.get(ProjectionHost).names, metrics_port: app.get(MetricsServer).port }, 'sigil worker running');

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'worker shutting down: finishing current batches');
    setTimeout(() => process.exit(1), config.SHUTDOWN_GRACE_MS).unref();
    await app.close();
    logger.info('worker stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((err) => {
  process.stderr.write(`sigil worker: failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
