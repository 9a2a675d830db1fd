import { createHash, timingSafeEqual } from 'node:crypto';
import type { AppConfig } from '@app/core';
import { errorEnvelope } from '@app/http';

/**
 * Where a process serves `GET /metrics`:
 * - `own_port`: METRICS_PORT is set: a listener of its own (api and worker alike), asking for
 *   the bearer token when METRICS_TOKEN is set too;
 * - `main_port`: only METRICS_TOKEN is set: the api's own port, behind the bearer token (the
 *   worker, which has no HTTP port, then serves none);
 * - `off`: neither: nothing is served (the api answers 404) and no request is timed.
 */
export type MetricsExposure = { mode: 'off' } | { mode: 'main_port'; token: string } | { mode: 'own_port'; port: number; token: string | null };

export function metricsExposure(config: Pick<AppConfig, 'METRICS_PORT' | 'METRICS_TOKEN'>): MetricsExposure {
  if (config.METRICS_PORT !== undefined) return { mode: 'own_port', port: config.METRICS_PORT, token: config.METRICS_TOKEN ?? null };
  if (config.METRICS_TOKEN) return { mode: 'main_port', token: config.METRICS_TOKEN };
  return { mode: 'off' };
}

/** Whether HOST is a loopback address (127.0.0.0/8, ::1, localhost): only this machine reaches it. */
export const isLoopbackHost = (host: string): boolean => {
  const h = host.trim().toLowerCase().replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h) || /^::ffff:127\./.test(h);
};

/**
 * The warning to log at start when the METRICS_PORT listener serves anyone who reaches it: no
 * METRICS_TOKEN, and HOST not loopback. Null otherwise.
 */
export function metricsExposureWarning(config: Pick<AppConfig, 'METRICS_PORT' | 'METRICS_TOKEN' | 'HOST'>): string | null {
  if (config.METRICS_PORT === undefined || config.METRICS_TOKEN || isLoopbackHost(config.HOST)) return null;
  return `GET /metrics on METRICS_PORT ${config.METRICS_PORT} is open to anyone who can reach ${config.HOST}: set METRICS_TOKEN, or HOST=127.0.0.1, or keep the port off the network`;
}

const digest = (s: string) => createHash('sha256').update(s).digest();

/**
 * Whether an Authorization header carries `Bearer <token>`, compared in constant time (both
 * sides hashed first, so neither the token's length nor its prefix leaks through timing).
 */
export function bearerMatches(header: string | string[] | undefined, token: string): boolean {
  if (typeof header !== 'string') return false;
  const m = /^Bearer +(\S+) *$/i.exec(header);
  // Compare something either way, so a malformed header takes as long as a wrong token.
  return timingSafeEqual(digest(m ? m[1] : ''), digest(token)) && m !== null;
}

/** The answer to an unauthorized scrape: 401 in the standard error envelope. */
export const METRICS_UNAUTHORIZED = {
  status: 401,
  headers: { 'content-type': 'application/json; charset=utf-8', 'www-authenticate': 'Bearer realm="metrics"' },
  body: JSON.stringify(errorEnvelope('auth_required', 'GET /metrics needs "Authorization: Bearer <METRICS_TOKEN>"', 401)),
};
