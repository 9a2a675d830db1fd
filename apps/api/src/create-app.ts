import { Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { fastify, FastifyReply, FastifyRequest } from 'fastify';
import { CONSOLE_UPLOAD_ROUTE, isConsolePath, sendRefusalPage } from '@app/console';
import { AppConfig, nulTextPath } from '@app/core';
import { completeOpenApiDocument, createLogger, ErrorEnvelopeFilter, errorEnvelope, Logger, PinoNestLogger, requestIdFor } from '@app/http';
import { ISSUANCE_BODY_LIMIT_BYTES } from '@app/notary';
import { answerScrape, Metrics, metricsExposure, UNMATCHED_ROUTE } from '@app/metrics';
import { Lifecycle } from '@app/platform';
import type { SettlementProvider } from '@app/settlement';
import { AppModule } from './app.module';

export interface CreateAppOptions {
  logger?: Logger;
  imports?: Type[];
  settlementProvider?: SettlementProvider;
}

/** A percent-encoded U+0000 anywhere in the path or the query. */
const NUL_IN_URL = /%00/;
/** Issuance takes a larger body, and its `content` may hold any text (it is only hashed). */
const ISSUANCE_ROUTE = '/api/notary/create';

/** An error in the envelope, answered by a hook before any route runs. */
// Structural: the server's replies and Nest's (another fastify's types) are both answered here.
type Answerable = { status(code: number): { header(name: string, value: string): { send(body: unknown): unknown } } };
const answerError = (reply: Answerable, status: number, code: string, message: string, details?: unknown) =>
  reply.status(status).header('content-type', 'application/json; charset=utf-8').send(errorEnvelope(code, message, status, details));

/** Builds the HTTP app (not yet listening): used by main.ts and by the e2e tests alike. */
export async function createApp(config: AppConfig, options: CreateAppOptions = {}): Promise<NestFastifyApplication> {
  const logger = options.logger ?? createLogger(config.LOG_LEVEL);
  // Set once the metrics registry exists (below): refusals that come before routing, and its hooks.
  let frameworkRefused: ((method: string, status: number, ms: number) => void) | null = null;
  // The instance comes from our own fastify (5.12), not the one pinned inside
  // @nestjs/platform-fastify (5.11), whose body parser wraps every request in
  // AsyncResource.bind (a deprecation wrapper per request: ~8% of a verification's CPU).
  const instance = fastify({
    loggerInstance: logger,
    genReqId: requestIdFor,
    bodyLimit: config.BODY_LIMIT_BYTES,
    // While closing, new requests get 503 and in-flight ones finish.
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    // Per-IP limits need the client's address: behind TRUST_PROXY's proxies, see trustProxy.
    trustProxy: trustProxy(config.TRUST_PROXY),
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    // What Fastify refuses before any route or hook runs (a path that is not valid percent-encoding,
    // `%ED%A0%80`, `%`; a path parameter over 100 characters) gets the envelope too, 400 bad_request:
    // Fastify's own answer was `{ error, code: FST_ERR_…, statusCode }` (and 414 for the length).
    frameworkErrors: (error, request, reply) => {
      const status = error.code === 'FST_ERR_BAD_URL' || error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 400 : 500;
      const body = status === 400 ? errorEnvelope('bad_request', 'The request path is malformed', 400) : errorEnvelope('internal_error', 'Internal server error', 500);
      if (status >= 500) request.log.error({ err: error }, 'request failed');
      void (reply as FastifyReply).header('x-request-id', request.id);
      // A person's browser on the console gets the console's page (the rest of the console's refusals: registerConsoleErrorPages).
      if (isConsolePath(request.url)) sendRefusalPage(reply as FastifyReply, status, body.message);
      else void (reply as FastifyReply).status(status).header('content-type', 'application/json; charset=utf-8').send(body);
      frameworkRefused?.(request.method, status, (reply as FastifyReply).elapsedTime);
    },
  });
  // JSON is the one request body the API takes (docs/errors.md): any other Content-Type is 415
  // unsupported_media_type. So Fastify's text/plain parser goes (it handed a route a string: a
  // JSON-looking text/plain body reached validation as one) and Nest adds none of its own
  // (`bodyParser: false` below: its urlencoded parser); Fastify's JSON parser stays, refusing
  // `__proto__` and `constructor.prototype` keys.
  instance.removeContentTypeParser('text/plain');
  const adapter = new FastifyAdapter(instance as unknown as ConstructorParameters<typeof FastifyAdapter>[0]);
  const app = await NestFactory.create<NestFastifyApplication>(AppModule.forRoot({ config, logger, imports: options.imports, settlementProvider: options.settlementProvider }), adapter, {
    logger: new PinoNestLogger(logger),
    bufferLogs: false,
    bodyParser: false,
  });
  app.useGlobalFilters(new ErrorEnvelopeFilter());
  const server = app.getHttpAdapter().getInstance();
  // Routes registered at init; the issuance routes (the API's, and the console's certificate
  // upload) get the larger body they need. Every other route keeps BODY_LIMIT_BYTES.
  server.addHook('onRoute', (route) => {
    if (route.url === ISSUANCE_ROUTE) route.bodyLimit = ISSUANCE_BODY_LIMIT_BYTES;
    if (route.url === CONSOLE_UPLOAD_ROUTE.url && route.method === CONSOLE_UPLOAD_ROUTE.method) route.bodyLimit = ISSUANCE_BODY_LIMIT_BYTES;
  });
  server.addHook('onRequest', async (req, reply) => {
    reply.header('x-request-id', req.id);
    // No path or query parameter has a use for U+0000, and PostgreSQL text refuses it: a %00
    // reached the registry's text search and answered 500 (found by the fuzz suite).
    if (NUL_IN_URL.test(req.url)) return answerError(reply, 400, 'bad_request', 'The request URL holds a NUL character (%00), which no parameter may contain');
  });
  // No text the service keeps may hold U+0000 (PostgreSQL text cannot): an API request's JSON
  // body holding one is refused before any route runs, naming where. The artifact an issuance
  // certifies is only hashed, never kept as text, so any string may be certified: that route's
  // `content` may hold one. (The console's forms are not JSON and answer with their own pages.)
  // One per route, holding whether it is the issuance (`request.routeOptions` builds a new object
  // on every read), and a callback rather than an async hook: it runs on every request.
  server.addHook('onRoute', (route) => {
    if (route.url.startsWith('/console')) return;
    const issuance = route.url === ISSUANCE_ROUTE;
    const refuseNul = (req: FastifyRequest, reply: FastifyReply, done: () => void) => {
      const body = req.body;
      if (body === null || typeof body !== 'object' || Buffer.isBuffer(body)) return done();
      const at = nulTextPath(issuance && !Array.isArray(body) ? { ...(body as Record<string, unknown>), content: undefined } : body);
      if (at === null) return done();
      void answerError(reply, 400, 'validation_failed', `Invalid body: ${at || 'body'}`, [{ field: at, message: 'must not contain U+0000' }]);
    };
    route.preValidation = [...(route.preValidation ? [route.preValidation].flat() : []), refuseNul] as unknown as typeof route.preValidation;
  });
  // Metrics (README, "Metrics"): every response timed by route template, when they are served at all.
  // Each route gets its own hook holding its template (Fastify's request.routeOptions builds a new
  // object on every read); a request no route matched is timed by the global hook alone.
  const exposure = metricsExposure(config);
  if (exposure.mode !== 'off') {
    const metrics = app.get(Metrics);
    server.addHook('onRoute', (route) => {
      const template = route.url;
      const timed = (req: FastifyRequest, reply: FastifyReply, done: () => void) => {
        metrics.httpRequest(template, req.method, reply.statusCode, reply.elapsedTime / 1000);
        done();
      };
      route.onResponse = [...(route.onResponse ? [route.onResponse].flat() : []), timed] as unknown as typeof route.onResponse;
    });
    server.addHook('onResponse', (req, reply, done) => {
      if (req.is404) metrics.httpRequest(UNMATCHED_ROUTE, req.method, reply.statusCode, reply.elapsedTime / 1000);
      done();
    });
    frameworkRefused = (method, status, ms) => metrics.httpRequest(UNMATCHED_ROUTE, method, status, Number.isFinite(ms) ? ms / 1000 : 0);
  }
  if (exposure.mode === 'main_port') {
    const metrics = app.get(Metrics);
    server.get('/metrics', async (req, reply) => {
      const answer = await answerScrape(metrics, req.headers.authorization, exposure.token);
      return reply.status(answer.status).headers(answer.headers).send(answer.body);
    });
  }
  // Shutdown: Node closes idle keep-alive sockets once, when close() starts; a request still in
  // flight then would leave its socket open until the keep-alive timeout. So while closing,
  // every response asks the client to close the connection.
  const lifecycle = app.get(Lifecycle);
  server.addHook('preClose', async () => lifecycle.startDraining());
  server.addHook('onSend', async (_req, reply) => {
    if (lifecycle.draining) reply.header('connection', 'close');
  });
  // Nest runs every module's shutdown hooks (projection runners, webhook workers: seconds on a
  // busy Redis) before it closes the HTTP server, which would keep accepting new requests all that
  // time. So a close stops accepting first; in-flight requests finish, and fastify's own close
  // later tolerates the listener being gone already.
  // (Nest hands out the application behind a Proxy whose `set` trap drops assignments, so the
  // method is replaced with defineProperty, which the Proxy passes through to the application.)
  // The prototype's own close: the Proxy's `app.close` looks the method up again at each call.
  const nestClose = (Object.getPrototypeOf(app) as { close: () => Promise<void> }).close;
  const closeApp = () => nestClose.call(app);
  Object.defineProperty(app, 'close', {
    configurable: true,
    value: async () => {
      lifecycle.startDraining();
      if (server.server.listening) server.server.close();
      return closeApp();
    },
  });

  const document = completeOpenApiDocument(
    SwaggerModule.createDocument(
      app,
      new DocumentBuilder()
        .setTitle('Sigil')
        .setDescription('Certificate authority for digital artifacts, and agent commerce orchestration.')
        .setVersion('1.0.0')
        .addServer(config.BASE_URL)
        .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'API key: cdp_live_… or cdp_test_…' })
        .build(),
    ),
  );
  SwaggerModule.setup('docs', app, document, { jsonDocumentUrl: '/openapi.json', yamlDocumentUrl: '/openapi.yaml' });
  await app.init();
  return app;
}

/**
 * Fastify's `trustProxy` for TRUST_PROXY: the client is the address the outermost trusted proxy
 * saw, counted from the right of X-Forwarded-For. A hop count is a function (this fastify reads a
 * plain number as "trust nothing"; `true` took the leftmost entry, which the client writes). With
 * addresses or CIDRs only hops from those are trusted, so a direct client is its socket address.
 */
function trustProxy(setting: number | string[]): false | string[] | ((address: string, hop: number) => boolean) {
  if (Array.isArray(setting)) return setting;
  return setting > 0 ? (_address: string, hop: number) => hop < setting : false;
}
