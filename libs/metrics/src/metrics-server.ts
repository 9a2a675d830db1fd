import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown, Optional } from '@nestjs/common';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { APP_CONFIG, AppConfig, LOGGER } from '@app/core';
import { errorEnvelope } from '@app/http';
import { bearerMatches, METRICS_UNAUTHORIZED, metricsExposure, metricsExposureWarning } from './exposure';
import { Metrics } from './metrics';

export interface ScrapeAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

const JSON_TYPE = { 'content-type': 'application/json; charset=utf-8' };

/** `GET /metrics`: 401 unless the Authorization header carries the token (when there is one), else the registry. */
export async function answerScrape(metrics: Metrics, authorization: string | string[] | undefined, token: string | null): Promise<ScrapeAnswer> {
  if (token !== null && !bearerMatches(authorization, token)) return METRICS_UNAUTHORIZED;
  try {
    const { contentType, body } = await metrics.scrape();
    return { status: 200, headers: { 'content-type': contentType, 'cache-control': 'no-store' }, body };
  } catch {
    return { status: 500, headers: JSON_TYPE, body: JSON.stringify(errorEnvelope('internal_error', 'Internal server error', 500)) };
  }
}

/**
 * The listener of METRICS_PORT (on HOST): `GET /metrics` and nothing else. Started with the
 * application, closed with it; not started unless METRICS_PORT is set.
 */
@Injectable()
export class MetricsServer implements OnApplicationBootstrap, OnApplicationShutdown {
  private server: Server | null = null;

  constructor(
    private readonly metrics: Metrics,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Optional() @Inject(LOGGER) private readonly logger?: { warn(obj: object, msg: string): void } | null,
  ) {}

  /** The port it listens on (METRICS_PORT=0 picks a free one), or null when not listening. */
  get port(): number | null {
    const address = this.server?.address();
    return address && typeof address === 'object' ? (address as AddressInfo).port : null;
  }

  async onApplicationBootstrap(): Promise<void> {
    const exposure = metricsExposure(this.config);
    if (exposure.mode !== 'own_port') return;
    const warning = metricsExposureWarning(this.config);
    if (warning) this.logger?.warn({ metrics_port: exposure.port, host: this.config.HOST }, warning);
    const server = createServer((req, res) => void this.handle(req, res, exposure.token));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(exposure.port, this.config.HOST, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.server = server;
  }

  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (server) await new Promise((resolve) => server.close(resolve));
  }

  private async handle(req: IncomingMessage, res: ServerResponse, token: string | null): Promise<void> {
    const path = (req.url ?? '/').split('?')[0];
    const answer: ScrapeAnswer =
      path === '/metrics' && (req.method === 'GET' || req.method === 'HEAD')
        ? await answerScrape(this.metrics, req.headers.authorization, token)
        : { status: 404, headers: JSON_TYPE, body: JSON.stringify(errorEnvelope('not_found', 'Only GET /metrics is served on this port', 404)) };
    res.writeHead(answer.status, answer.headers);
    res.end(req.method === 'HEAD' ? undefined : answer.body);
  }
}
