import { ArgumentsHost, Catch, ExceptionFilter } from '@nestjs/common';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Scope } from '@app/access';
import { AppError } from '@app/core';
import { toErrorResponse } from '@app/http';
import { sameSecret } from '../domain/secrets';
import type { ConsoleViewer } from '../people/console-auth';
import { CONSOLE_CSP } from '../pages/layout';
import { errorPage } from '../pages/misc.pages';

/** A console request: the form body (parsed by the console's own urlencoded parser) and the person, once resolved. */
export type ConsoleRequest = FastifyRequest & { consoleViewer?: ConsoleViewer | null };
export type FormBody = Record<string, string>;

const PAGE_HEADERS = { 'content-security-policy': CONSOLE_CSP, 'x-content-type-options': 'nosniff', 'referrer-policy': 'no-referrer', 'x-frame-options': 'DENY', 'cache-control': 'no-store' };

export function sendPage(reply: FastifyReply, status: number, body: string): void {
  void reply
    .status(status)
    .headers({ ...PAGE_HEADERS, 'content-type': 'text/html; charset=utf-8' })
    .send(body);
}

/** After a form: see the result with a GET (303), so a reload does not post again. */
export const redirect = (reply: FastifyReply, to: string) => void reply.status(303).header('location', to).header('cache-control', 'no-store').send();

/** Cookies are Secure when the console is served over HTTPS (directly, or behind a proxy that says so and is trusted). */
export const isSecure = (req: FastifyRequest, baseUrl: string) => req.protocol === 'https' || baseUrl.startsWith('https:');

/** A field of a urlencoded form, or '' (the console's parser answers an object of strings). */
export const formField = (body: unknown, name: string): string => {
  const v = body && typeof body === 'object' ? (body as FormBody)[name] : undefined;
  return typeof v === 'string' ? v : '';
};

/** The synchronizer token of the session must come back with every state-changing form. */
export function checkCsrf(viewerCsrf: string, body: unknown): void {
  const presented = formField(body, 'csrf');
  if (!presented || !sameSecret(presented, viewerCsrf)) throw new AppError('csrf_token_invalid', 'This form expired or did not come from the console; reload the page and try again', 403);
}

const SCOPE_WORDS: Partial<Record<Scope, string>> = {
  'approvals:manage': 'review payments',
  'payments:read': 'see transactions',
  'users:manage': 'manage people',
  'keys:manage': 'manage API keys',
};

export function requireScope(viewer: ConsoleViewer, scope: Scope): void {
  if (!viewer.scopes.includes(scope)) {
    throw new AppError('insufficient_scope', `Your role (${viewer.user.role}) cannot ${SCOPE_WORDS[scope] ?? scope}: it needs the scope ${scope}. Ask an owner or admin.`, 403, { missing_scopes: [scope] });
  }
}

/** The console's page for an error: the same status as the API's envelope, said in a sentence. */
export function consoleErrorPage(status: number, message: string, viewer: ConsoleViewer | null): string {
  const title =
    status === 404 ? 'Not found' : status === 429 ? 'Too many attempts' : status === 403 ? 'Not allowed' : status === 401 ? 'Sign in first' : status === 409 ? 'Already decided or changed' : status >= 500 ? 'Something went wrong' : 'That did not work';
  return errorPage(status, title, status === 404 ? 'There is nothing here, or it belongs to another organization.' : message, viewer);
}

/** Errors on console routes are pages. */
@Catch()
export class ConsolePageFilter implements ExceptionFilter {
  catch(exception: unknown, host: ArgumentsHost): void {
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    const req = host.switchToHttp().getRequest<ConsoleRequest>();
    const { status, body, headers } = toErrorResponse(exception);
    if (status >= 500) req.log?.error({ err: exception }, 'request failed');
    if (reply.sent) return;
    void reply.headers(headers);
    sendPage(reply, status, consoleErrorPage(status, body.message, req.consoleViewer ?? null));
  }
}

/** A path the console serves: `/console` and everything under it. */
export const isConsolePath = (url: string) => url.startsWith('/console') && (url.length === 8 || url[8] === '/' || url[8] === '?');

/** The console's error page for a refusal no console route made (see registerConsoleErrorPages). */
export const sendRefusalPage = (reply: FastifyReply, status: number, message: string) => sendPage(reply, status, consoleErrorPage(status, message, null));

/**
 * What the app refuses on a console path before any console route runs answers with the API's
 * JSON envelope: a page that does not exist (404), a malformed path or a %00 in it (400), a form
 * over the body limit (413). A person's browser gets the console's error page instead, with the
 * same status and message. The person is not known there (no route resolved the session), so the
 * page offers to sign in. (What Fastify refuses before any hook runs, a path that is not valid
 * percent-encoding, is answered by the app's frameworkErrors with sendRefusalPage.)
 */
export function registerConsoleErrorPages(server: FastifyInstance): void {
  server.addHook('onSend', (req, reply, payload, done) => {
    if (reply.statusCode < 400 || typeof payload !== 'string' || !isConsolePath(req.url) || !String(reply.getHeader('content-type') ?? '').startsWith('application/json')) {
      done(null, payload);
      return;
    }
    let message: unknown;
    try {
      message = (JSON.parse(payload) as { message?: unknown }).message;
    } catch {
      done(null, payload);
      return;
    }
    void reply.headers({ ...PAGE_HEADERS, 'content-type': 'text/html; charset=utf-8' });
    done(null, consoleErrorPage(reply.statusCode, typeof message === 'string' ? message : 'The request was refused', null));
  });
}
