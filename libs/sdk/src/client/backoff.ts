/**
 * The spec's backoff contract (service-interface.md, Limits): honour Retry-After when present,
 * otherwise an exponentially growing delay; retry on 429 and 503 only; add jitter of up to
 * 500 ms; stop after 6 attempts; never retry an error whose retryable flag is false.
 */
export const MAX_ATTEMPTS = 6;
export const BASE_DELAY_MS = 500;
export const MAX_BACKOFF_MS = 30_000;
export const MAX_JITTER_MS = 500;
export const RETRY_STATUSES: readonly number[] = [429, 503];

/** Retry-After as milliseconds to wait: delta-seconds or an HTTP-date; null when absent or unreadable. */
export function parseRetryAfter(value: string | null | undefined, nowMs: number): number | null {
  if (value === null || value === undefined) return null;
  const text = value.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  // An HTTP-date names a day of the week and a time; a bare number was handled above.
  if (!/[a-z]/i.test(text)) return null;
  const at = Date.parse(text);
  return Number.isNaN(at) ? null : Math.max(0, at - nowMs);
}

/** The delay before attempt `attempt + 1` when the server named none: 500 ms, 1 s, 2 s, … capped. */
export function exponentialDelay(attempt: number, baseMs = BASE_DELAY_MS, capMs = MAX_BACKOFF_MS): number {
  return Math.min(capMs, baseMs * 2 ** Math.max(0, attempt - 1));
}

/** Uniform jitter in [0, 500) ms from a [0, 1) random source. */
export function jitter(random: () => number): number {
  const r = random();
  return Math.floor((r >= 0 && r < 1 ? r : 0) * MAX_JITTER_MS);
}
