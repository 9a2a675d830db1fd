/** The console's cookies: the session (HttpOnly, SameSite=Strict, Secure over HTTPS) and the sign-in forms' CSRF token. */
export const SESSION_COOKIE = 'sigil_session';
export const PRE_SESSION_COOKIE = 'sigil_signin';

export function parseCookies(header: string | undefined): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of (header ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at <= 0) continue;
    const name = part.slice(0, at).trim();
    // The first of two cookies with one name wins (a parent domain cannot shadow ours).
    if (!out.has(name)) out.set(name, part.slice(at + 1).trim());
  }
  return out;
}

export function cookie(name: string, value: string, options: { secure: boolean; maxAgeSeconds: number; path?: string }): string {
  return [`${name}=${value}`, `Path=${options.path ?? '/console'}`, `Max-Age=${Math.max(0, Math.floor(options.maxAgeSeconds))}`, 'HttpOnly', 'SameSite=Strict', ...(options.secure ? ['Secure'] : [])].join('; ');
}

export const clearedCookie = (name: string, secure: boolean) => cookie(name, '', { secure, maxAgeSeconds: 0 });
