import { createHash } from 'node:crypto';
import { minorUnits } from '@app/commerce';
import type { ConsoleViewer } from '../people/console-auth';
import { CONSOLE_SCRIPT, CONSOLE_STYLE } from './assets';

/**
 * The console's pages are rendered on the server as strings: plain functions, no template engine,
 * no build step. Every interpolated value goes through `esc()`; scripts and styles are same-origin
 * files (no inline script or style), so the CSP allows nothing else.
 */
export const esc = (value: unknown): string => String(value ?? '').replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

const version = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 12);
export const STYLE_URL = `/console/assets/console.css?v=${version(CONSOLE_STYLE)}`;
export const SCRIPT_URL = `/console/assets/console.js?v=${version(CONSOLE_SCRIPT)}`;

export interface PageOptions {
  viewer?: ConsoleViewer | null;
  /** A notice at the top (a result, or what went wrong). */
  flash?: { kind: 'ok' | 'error'; text: string } | null;
  /** Scripts besides the console's own (the SDK bundle on the timeline). */
  scripts?: string[];
}

const NAV: [string, string][] = [
  ['/console/approvals', 'Approvals'],
  ['/console/transactions', 'Transactions'],
  ['/console/webhooks', 'Webhooks'],
  ['/console/policies', 'Policies'],
  ['/console/certificates', 'Certificates'],
  ['/console/keys', 'Keys'],
  ['/console/people', 'People'],
  ['/console/account', 'Account'],
];

export function page(title: string, body: string, options: PageOptions = {}): string {
  const v = options.viewer;
  const nav = v
    ? `<nav aria-label="Console"><ul>${NAV.map(([href, label]) => `<li><a href="${href}">${esc(label)}</a></li>`).join('')}</ul>
<form method="post" action="/console/sign-out" class="inline"><input type="hidden" name="csrf" value="${esc(v.csrf)}"><button type="submit">Sign out</button></form>
<p class="who">${esc(v.user.display_name)} <span class="role">${esc(v.user.role)}</span></p></nav>`
    : '';
  const flash = options.flash ? `<p class="flash ${options.flash.kind}" role="${options.flash.kind === 'error' ? 'alert' : 'status'}" id="flash">${esc(options.flash.text)}</p>` : '';
  const scripts = [...(options.scripts ?? []), SCRIPT_URL].map((src) => `<script src="${esc(src)}" defer></script>`).join('\n');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${esc(title)} · Sigil console</title>
<link rel="stylesheet" href="${STYLE_URL}">
${scripts}
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header><a class="brand" href="/console">Sigil console</a>${nav}</header>
<main id="main">
<h1>${esc(title)}</h1>
${flash}
${body}
</main>
</body>
</html>
`;
}

/** An amount in its currency's minor units, as people read it. */
export function money(cents: number, currency: string): string {
  let digits = 2;
  try {
    digits = minorUnits(currency);
  } catch {
    /* an unknown code shows with two decimals */
  }
  return `${(cents / 10 ** digits).toFixed(digits)} ${currency}`;
}

/** How long until `iso`, roughly: "in 4 min", "in 2 h 5 min", "expired". */
export function timeLeft(iso: string | null, now: Date): string {
  if (!iso) return '';
  const ms = Date.parse(iso) - now.getTime();
  if (ms <= 0) return 'expired';
  const minutes = Math.ceil(ms / 60_000);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h ${minutes % 60} min`;
  return `${Math.floor(hours / 24)} days`;
}

export const hidden = (name: string, value: string) => `<input type="hidden" name="${esc(name)}" value="${esc(value)}">`;
