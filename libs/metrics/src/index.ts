export * from './metrics';
export { ChildCache, sharedProbe } from './child-cache';
export { bearerMatches, metricsExposure, METRICS_UNAUTHORIZED, type MetricsExposure } from './exposure';
export { answerScrape, MetricsServer, type ScrapeAnswer } from './metrics-server';
export { MetricsModule } from './metrics.module';
