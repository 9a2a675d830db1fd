import busboy from 'busboy';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { errorEnvelope } from '@app/http';
import type { ConsoleAuth } from '../people/console-auth';
import { errorPage } from '../pages/misc.pages';
import { sessionTokenOf } from './console-forms';
import { sendPage } from './console-http';

/** The form field a file part's name is given under, and where its file name and decoding problem go. */
export const fileFields = (name: string) => ({ content: name, filename: `${name}.filename`, error: `${name}.error` });

/** The one route that takes `multipart/form-data`: the console's certificate form. */
export const CONSOLE_UPLOAD_ROUTE = { method: 'POST', url: '/console/certificates' } as const;

const isMultipart = (req: FastifyRequest) => /^multipart\/form-data\b/i.test(String(req.headers['content-type'] ?? ''));
const isUploadRoute = (req: FastifyRequest) => req.method === CONSOLE_UPLOAD_ROUTE.method && req.routeOptions.url === CONSOLE_UPLOAD_ROUTE.url;

/**
 * The console's file upload (issue a certificate from a file) posts `multipart/form-data`, to one
 * route alone; every other route refuses the type in an `onRequest` hook, before a byte of the body
 * is read (415 `unsupported_media_type`): the API stays JSON-only. The parser's own limit is the
 * server's BODY_LIMIT_BYTES (Fastify applies a parser's limit to any route without its own); the
 * upload route alone has the larger limit (the API's ISSUANCE_BODY_LIMIT_BYTES, set on the route in
 * apps/api's create-app). Before that route reads its body, the session is checked (a person with
 * certificates:write): a stranger's upload is refused unread. The CSRF token is a form field, so it
 * is checked once the form is read (the session cookie is SameSite=Strict meanwhile).
 * Parts come back as an object of strings: each field's first value, and a file as its UTF-8 text
 * (a certificate's content is a string, as in the API) with its name beside it; a file that is not
 * UTF-8 text is reported in `<name>.error`, for the page to say so.
 */
export function registerConsoleMultipartParser(server: FastifyInstance, options: { bodyLimit: number; uploadLimit: number; auth: ConsoleAuth }): void {
  if (server.hasContentTypeParser('multipart/form-data')) return;
  server.addHook('onRequest', async (req, reply) => {
    if (!isMultipart(req) || isUploadRoute(req)) return;
    return reply.status(415).header('content-type', 'application/json; charset=utf-8').send(errorEnvelope('unsupported_media_type', 'multipart/form-data is accepted only by the console’s certificate form', 415));
  });
  server.addHook('preParsing', async (req, reply) => {
    if (!isMultipart(req) || !isUploadRoute(req)) return;
    const viewer = await options.auth.viewer(sessionTokenOf(options.auth, req));
    if (!viewer) return reply.status(303).header('location', '/console/sign-in').header('cache-control', 'no-store').header('connection', 'close').send();
    if (!viewer.scopes.includes('certificates:write')) {
      void reply.header('connection', 'close');
      sendPage(reply, 403, errorPage(403, 'Not allowed', `Your role (${viewer.user.role}) cannot issue certificates: it needs the scope certificates:write. Ask an owner or admin.`, viewer));
      return reply;
    }
  });
  server.addContentTypeParser('multipart/form-data', { parseAs: 'buffer', bodyLimit: options.bodyLimit }, (req, body, done) => {
    if (!isUploadRoute(req)) {
      done(Object.assign(new Error('Unsupported Media Type'), { statusCode: 415 }), undefined);
      return;
    }
    parseMultipart(req.headers, body as Buffer, options.uploadLimit).then(
      (out) => done(null, out),
      (err: Error) => done(Object.assign(new Error(`The form could not be read: ${err.message}`), { statusCode: 400 }), undefined),
    );
  });
}

export function parseMultipart(headers: Record<string, string | string[] | undefined>, body: Buffer, limit: number): Promise<Record<string, string>> {
  return new Promise((resolve, reject) => {
    const out: Record<string, string> = Object.create(null);
    let bb: busboy.Busboy;
    try {
      bb = busboy({ headers: headers as busboy.BusboyConfig['headers'], limits: { files: 2, fields: 50, parts: 60, fieldSize: limit, fileSize: limit }, defParamCharset: 'utf8' });
    } catch (err) {
      reject(err as Error);
      return;
    }
    bb.on('field', (name, value) => {
      if (!(name in out)) out[name] = value;
    });
    bb.on('file', (name, stream, info) => {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const f = fileFields(name);
        if (f.content in out) return;
        const bytes = Buffer.concat(chunks);
        // A file input left empty still posts a part, with no name and no bytes.
        if (!info.filename && bytes.length === 0) return;
        out[f.filename] = info.filename ?? '';
        try {
          out[f.content] = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
        } catch {
          out[f.error] = 'not_utf8';
        }
      });
    });
    bb.on('error', (err) => reject(err as Error));
    bb.on('close', () => resolve(out));
    bb.end(body);
  });
}
