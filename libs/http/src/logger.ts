import type { LoggerService } from '@nestjs/common';
import pino, { Logger } from 'pino';

export type { Logger } from 'pino';

/** Query parameters that carry a secret (the console's one-time sign-in token): never logged. */
const SECRET_QUERY_PARAMS = ['token'];
const SECRET_QUERY_RE = new RegExp(`([?&](?:${SECRET_QUERY_PARAMS.join('|')})=)[^&#]*`, 'gi');

/** A request URL as logged: each secret query parameter's value replaced by `[redacted]`. */
export const redactUrl = (url: string | undefined): string | undefined => url?.replace(SECRET_QUERY_RE, '$1[redacted]');

interface LoggedRequest {
  method?: string;
  url?: string;
  host?: string;
  ip?: string;
  headers?: Record<string, unknown>;
  socket?: { remotePort?: number };
}

/** Fastify's request serializer (method, url, host, client address), with secrets cut from the URL. */
const requestSerializer = (req: LoggedRequest) => ({
  method: req.method,
  url: redactUrl(req.url),
  version: req.headers?.['accept-version'],
  host: req.host,
  remoteAddress: req.ip,
  remotePort: req.socket?.remotePort,
});

/**
 * JSON logs on stdout (or `destination`), one object per line. Fastify takes this logger's
 * serializers over its own, so request lines go through `requestSerializer`.
 */
export function createLogger(level: string, name = 'sigil', destination?: pino.DestinationStream): Logger {
  const options: pino.LoggerOptions = {
    name,
    level,
    base: { pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
    serializers: { req: requestSerializer, err: pino.stdSerializers.err },
    redact: { paths: ['req.headers.authorization', 'req.headers.cookie', 'headers.authorization'], censor: '[redacted]' },
  };
  return destination ? pino(options, destination) : pino(options);
}

/** Routes Nest's own log lines (bootstrap, module init) through pino. */
export class PinoNestLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}
  log(message: unknown, context?: string) {
    this.logger.info({ context }, String(message));
  }
  error(message: unknown, trace?: string, context?: string) {
    this.logger.error({ context, trace }, String(message));
  }
  warn(message: unknown, context?: string) {
    this.logger.warn({ context }, String(message));
  }
  debug(message: unknown, context?: string) {
    this.logger.debug({ context }, String(message));
  }
  verbose(message: unknown, context?: string) {
    this.logger.trace({ context }, String(message));
  }
}
