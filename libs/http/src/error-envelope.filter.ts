import { ArgumentsHost, Catch, ExceptionFilter } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { toErrorResponse } from './error-response';

/** The one place errors become HTTP responses: routes, unknown paths, body parsing, limits. */
@Catch()
export class ErrorEnvelopeFilter implements ExceptionFilter {
  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const reply = http.getResponse<FastifyReply>();
    const request = http.getRequest<FastifyRequest>();
    const { status, body, headers } = toErrorResponse(exception);
    if (status >= 500) request?.log?.error({ err: exception }, 'request failed');
    else request?.log?.debug({ code: body.error }, 'request rejected');
    if (reply.sent) return;
    reply.status(status).headers(headers).header('content-type', 'application/json; charset=utf-8').send(body);
  }
}
