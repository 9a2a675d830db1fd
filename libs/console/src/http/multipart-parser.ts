import busboy from 'busboy';
import type { FastifyInstance } from 'fastify';

/** The form field a file part's name is given under, and where its file name and decoding problem go. */
export const fileFields = (name: string) => ({ content: name, filename: `${name}.filename`, error: `${name}.error` });

/**
 * The console's file upload (issue a certificate from a file) posts `multipart/form-data`. Like the
 * console's urlencoded parser, this one answers console paths alone: the API stays JSON-only (415).
 * Parts come back as an object of strings: each field's first value, and a file as its UTF-8 text
 * (a certificate's content is a string, as in the API) with its name beside it; a file that is not
 * UTF-8 text is reported in `<name>.error`, for the page to say so. `bodyLimit` is the issuance
 * route's own (the API's ISSUANCE_BODY_LIMIT_BYTES).
 */
export function registerConsoleMultipartParser(server: FastifyInstance, bodyLimit: number): void {
  if (server.hasContentTypeParser('multipart/form-data')) return;
  server.addContentTypeParser('multipart/form-data', { parseAs: 'buffer', bodyLimit }, (req, body, done) => {
    if (!req.url.startsWith('/console/')) {
      done(Object.assign(new Error('Unsupported Media Type'), { statusCode: 415 }), undefined);
      return;
    }
    parseMultipart(req.headers, body as Buffer, bodyLimit).then(
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
