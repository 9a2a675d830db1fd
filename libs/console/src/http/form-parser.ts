import type { FastifyInstance } from 'fastify';
import { AppError } from '@app/core';
import { errorPage } from '../pages/misc.pages';
import { sendPage } from './console-http';

/** The body types the console's forms post: urlencoded, and multipart (the certificate form alone; see multipart-parser). */
const FORM_TYPES = new Set(['application/x-www-form-urlencoded', 'multipart/form-data']);
const mediaType = (header: unknown) => String(header ?? '').split(';')[0].trim().toLowerCase();

/**
 * HTML forms post `application/x-www-form-urlencoded`. The API takes JSON only (415 otherwise),
 * so this parser answers console paths alone; anywhere else the type stays unsupported. A field
 * given twice keeps its first value.
 *
 * The console takes forms only: a body of any other type (JSON, which the API's parser would read)
 * is refused on console paths before it is read, with a 415 page. A JSON body reached the pages as
 * an object that skipped this parser's U+0000 check (and the API's, which leaves console paths to
 * this one), so a key named with U+0000 answered 500.
 */
export function registerConsoleFormParser(server: FastifyInstance): void {
  if (server.hasContentTypeParser('application/x-www-form-urlencoded')) return;
  server.addHook('onRequest', async (req, reply) => {
    if (!req.url.startsWith('/console/') || req.headers['content-type'] === undefined || FORM_TYPES.has(mediaType(req.headers['content-type']))) return;
    sendPage(reply, 415, errorPage(415, 'That did not work', 'The console takes its own forms only (application/x-www-form-urlencoded, or multipart/form-data for a file); the API takes JSON at /api.', null));
    return reply;
  });
  server.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (req, body, done) => {
    if (!req.url.startsWith('/console/')) {
      done(Object.assign(new Error('Unsupported Media Type'), { statusCode: 415 }), undefined);
      return;
    }
    const out: Record<string, string> = Object.create(null);
    for (const [k, v] of new URLSearchParams(body as string)) {
      // No field has a use for U+0000, and PostgreSQL text cannot keep it (the API refuses it too).
      if (k.includes('\u0000') || v.includes('\u0000')) {
        done(new AppError('bad_request', 'A form field holds U+0000, which no field may contain', 400), undefined);
        return;
      }
      if (!(k in out)) out[k] = v;
    }
    done(null, out);
  });
}
