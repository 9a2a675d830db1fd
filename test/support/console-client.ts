import { randomBytes } from 'node:crypto';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Scope, SCOPES } from '@app/access';

/** One person's browser over inject(): cookies kept between requests, urlencoded or multipart forms. */
export function consoleClient(app: NestFastifyApplication) {
  const jar = new Map<string, string>();
  const send = async (method: 'GET' | 'POST', url: string, form?: Record<string, string> | { multipart: Buffer; boundary: string }) => {
    const multipart = form && 'multipart' in form ? (form as { multipart: Buffer; boundary: string }) : null;
    const res = await app.inject({
      method,
      url,
      headers: {
        cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; '),
        ...(multipart ? { 'content-type': `multipart/form-data; boundary=${multipart.boundary}` } : form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      ...(multipart ? { payload: multipart.multipart } : form ? { payload: new URLSearchParams(form as Record<string, string>).toString() } : {}),
    });
    const set = res.headers['set-cookie'];
    for (const c of (Array.isArray(set) ? set : set ? [set] : []) as string[]) {
      const [pair] = c.split(';');
      const [name, value] = [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)];
      if (/Max-Age=0/.test(c)) jar.delete(name);
      else jar.set(name, value);
    }
    return { status: res.statusCode, body: res.body, headers: res.headers };
  };
  const csrf = (html: string) => /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';
  return { jar, send, csrf };
}
export type ConsoleClient = ReturnType<typeof consoleClient>;

/** Signs in through a one-time link (the sign-in form and its double-submit token, as a browser does). */
export async function signInByLink(app: NestFastifyApplication, url: string): Promise<ConsoleClient> {
  const b = consoleClient(app);
  const link = new URL(url);
  const page = await b.send('GET', link.pathname + link.search);
  const res = await b.send('POST', '/console/sign-in/link', { csrf: b.csrf(page.body), token: link.searchParams.get('token')! });
  if (res.status !== 303) throw new Error(`sign-in by link answered ${res.status}`);
  return b;
}

/**
 * A person of the given role, invited over `POST /api/users` by a key with every scope of a new
 * organization (or of `orgId`), signed in by their link.
 */
export async function invitedPerson(
  app: NestFastifyApplication,
  access: { createOrganization(name: string): Promise<{ org_id: string }>; createApiKey(orgId: string, o: { scopes: Scope[]; mode: 'test' }): Promise<{ key: string }> },
  role: 'admin' | 'viewer',
  orgId?: string,
): Promise<{ b: ConsoleClient; orgId: string }> {
  const org = orgId ?? (await access.createOrganization(`console-${randomBytes(3).toString('hex')}`)).org_id;
  const key = await access.createApiKey(org, { scopes: [...SCOPES], mode: 'test' });
  const res = await app.inject({
    method: 'POST',
    url: '/api/users',
    headers: { authorization: `Bearer ${key.key}` },
    payload: { email: `${role}-${randomBytes(4).toString('hex')}@example.com`, display_name: `${role} person`, role },
  });
  expect(res.statusCode).toBe(201);
  return { b: await signInByLink(app, (res.json() as { url: string }).url), orgId: org };
}

/** A multipart/form-data body: fields, and files as (name, file name, bytes). */
export function multipart(fields: Record<string, string>, files: { name: string; filename: string; content: Buffer }[] = []): { multipart: Buffer; boundary: string } {
  const boundary = `----sigil${randomBytes(8).toString('hex')}`;
  const parts: Buffer[] = [];
  for (const [k, v] of Object.entries(fields)) parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`));
  for (const f of files) {
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${f.name}"; filename="${f.filename}"\r\nContent-Type: application/octet-stream\r\n\r\n`), f.content, Buffer.from('\r\n'));
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return { multipart: Buffer.concat(parts), boundary };
}
