/**
 * The console's cookies: the session (HttpOnly, SameSite=Strict) and the sign-in forms' CSRF token.
 * Over HTTPS they are `__Host-` cookies (Secure, Path=/, no Domain): the browser keeps them to this
 * exact host, so a sibling subdomain cannot set one that shadows ours (session fixation), and the
 * server reads only the prefixed name there. Over plain HTTP (local use) the names are plain and
 * the path is /console.
 */
export const SESSION_COOKIE = 'sigil_session';
export const PRE_SESSION_COOKIE = 'sigil_signin';
export const HOST_PREFIX = '__Host-';

/** The name a cookie goes by: `__Host-<name>` over HTTPS, `<name>` over HTTP. */
export const cookieName = (name: string, secure: boolean) => (secure ? `${HOST_PREFIX}${name}` : name);

export function parseCookies(header: string | undefined): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of (header ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at <= 0) continue;
    const name = part.slice(0, at).trim();
    // The first of two cookies with one name wins (the more specific path comes first).
    if (!out.has(name)) out.set(name, part.slice(at + 1).trim());
  }
  return out;
}

/** The value of one of the console's cookies, under the name it has over this scheme. */
export const readCookie = (header: string | undefined, name: string, secure: boolean) => parseCookies(header).get(cookieName(name, secure));

export function cookie(name: string, value: string, options: { secure: boolean; maxAgeSeconds: number }): string {
  const path = options.secure ? '/' : '/console';
  return [`${cookieName(name, options.secure)}=${value}`, `Path=${path}`, `Max-Age=${Math.max(0, Math.floor(options.maxAgeSeconds))}`, 'HttpOnly', 'SameSite=Strict', ...(options.secure ? ['Secure'] : [])].join('; ');
}

export const clearedCookie = (name: string, secure: boolean) => cookie(name, '', { secure, maxAgeSeconds: 0 });
