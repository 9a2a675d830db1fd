import type { FastifyInstance } from 'fastify';

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
    for (const [k, v] of new URLSearchParams(body as string)) if (!(k in out)) out[k] = v;
    done(null, out);
  });
}
