import type { FastifyInstance } from 'fastify';
import { AppError } from '@app/core';

/**
 * HTML forms post `application/x-www-form-urlencoded`. The API takes JSON only (415 otherwise),
 * so this parser answers console paths alone; anywhere else the type stays unsupported. A field
 * given twice keeps its first value.
 */
export function registerConsoleFormParser(server: FastifyInstance): void {
  if (server.hasContentTypeParser('application/x-www-form-urlencoded')) return;
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
