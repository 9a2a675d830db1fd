import { AppError } from '@app/core';
import { canonicalJson, sha256Hex } from '@app/crypto';

/** 1..255 printable ASCII characters (space through tilde), as Stripe and most payment APIs take. */
const KEY_RE = /^[\x20-\x7e]{1,255}$/;

export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';
export const IDEMPOTENT_REPLAYED_HEADER = 'idempotent-replayed';

/** Checks a caller's key; anything else is 400 `invalid_idempotency_key`. */
export function parseIdempotencyKey(value: unknown): string {
  if (typeof value !== 'string' || !KEY_RE.test(value)) {
    throw new AppError('invalid_idempotency_key', 'Idempotency-Key must be 1..255 printable ASCII characters', 400);
  }
  return value;
}

/**
 * The request's fingerprint: SHA-256 (hex) of the body's RFC 8785 form, so key order and spacing
 * never matter. A route whose input is also in its query string (`…/recover?since=…`) passes the
 * query too: then the fingerprint covers both (a request without a query hashes as before).
 */
export const requestHash = (body: unknown, query?: Record<string, unknown>): string => {
  const canonicalBody = canonicalJson(body === undefined ? null : body);
  if (!query || Object.keys(query).length === 0) return sha256Hex(canonicalBody);
  return sha256Hex(`query:${canonicalJson({ ...query })}\nbody:${canonicalBody}`);
};

/**
 * A name for one exact request (owner, key, method and path, fingerprint), the same every time it
 * is sent; see IdempotentRequest.
 */
export const requestIdOf = (claim: { org: string; key: string; methodPath: string; hash: string }): string =>
  sha256Hex(`${claim.org}\n${claim.key}\n${claim.methodPath}\n${claim.hash}`);

/** What one key is bound to besides the body: `POST /api/cdp/authorize`. */
export const methodPath = (method: string, path: string): string => `${method.toUpperCase()} ${path.split('?')[0]}`;

/**
 * Which refusals are stored as the key's response. Following Stripe, a result is saved once the
 * endpoint has started executing: a domain refusal (402, 403, 404, 422…) is the answer for that
 * request and replays. Not stored, so the same key may be retried: 400 (the input was rejected
 * before anything ran, e.g. validation), 408/409/425/429 (a transient state: a concurrent
 * change, a limit) and every 5xx; nor anything that is not a refusal (an unexpected error).
 */
export const isStorableStatus = (s: number): boolean => s > 400 && s < 500 && ![408, 409, 425, 429].includes(s);

export const idempotencyKeyReused = (why: string) =>
  new AppError('idempotency_key_reused', `This Idempotency-Key was already used for ${why}; use a new key for a new request`, 422);

export const idempotencyRequestInProgress = (retryAfterSeconds: number) =>
  new AppError(
    'idempotency_request_in_progress',
    'A request with this Idempotency-Key is still being processed; retry after it finishes',
    409,
    undefined,
    { 'retry-after': String(retryAfterSeconds) },
  );
