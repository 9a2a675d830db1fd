/**
 * Every failed call surfaces as a SigilError: an HTTP error response (JSON envelope
 * `{ ok: false, error, message, retryable, details? }` or plain text), or a network failure (status 0).
 */
export class SigilError extends Error {
  /** HTTP status; 0 for a network error or timeout. */
  readonly status: number;
  /** The service's stable snake_case code (`error` in the body), or one derived from the status. */
  readonly code: string;
  /** Whether repeating the same call may succeed (the body's `retryable` flag wins when present). */
  readonly retryable: boolean;
  /** The parsed JSON body, or the response text. */
  readonly body: unknown;
  /** X-Request-Id of the response, for support and logs. */
  readonly requestId: string | null;
  /** What Retry-After asked for, in ms, when the response carried one. */
  readonly retryAfterMs: number | null;
  /** How many attempts were made. */
  readonly attempts: number;

  constructor(init: {
    status: number;
    code: string;
    message: string;
    retryable: boolean;
    body?: unknown;
    requestId?: string | null;
    retryAfterMs?: number | null;
    attempts?: number;
    cause?: unknown;
  }) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = 'SigilError';
    this.status = init.status;
    this.code = init.code;
    this.retryable = init.retryable;
    this.body = init.body ?? null;
    this.requestId = init.requestId ?? null;
    this.retryAfterMs = init.retryAfterMs ?? null;
    this.attempts = init.attempts ?? 1;
  }
}

const CODE_BY_STATUS: Record<number, string> = {
  400: 'bad_request',
  401: 'auth_required',
  403: 'forbidden',
  404: 'not_found',
  409: 'conflict',
  413: 'payload_too_large',
  422: 'unprocessable_entity',
  429: 'rate_limited',
  500: 'internal_error',
  502: 'bad_gateway',
  503: 'service_unavailable',
  504: 'gateway_timeout',
};

/** Builds the error for a non-2xx response from its parsed body (JSON object) or text. */
export function errorFromResponse(
  status: number,
  body: unknown,
  meta: { requestId: string | null; retryAfterMs: number | null; attempts: number },
): SigilError {
  const json = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : null;
  const code = typeof json?.error === 'string' ? json.error : typeof json?.code === 'string' ? json.code : (CODE_BY_STATUS[status] ?? `http_${status}`);
  const text = typeof body === 'string' ? body.trim().slice(0, 500) : '';
  const message = typeof json?.message === 'string' ? json.message : text || `HTTP ${status}`;
  // Every error body of the service has a top-level `retryable` (docs/errors.md); `details.retryable`
  // (settlement_failed) is read too, and a body without either (a proxy's) falls back to 429/503.
  const details = typeof json?.details === 'object' && json.details !== null ? (json.details as Record<string, unknown>) : null;
  const flag = typeof json?.retryable === 'boolean' ? json.retryable : typeof details?.retryable === 'boolean' ? details.retryable : undefined;
  const retryable = flag ?? (status === 429 || status === 503);
  return new SigilError({ status, code, message, retryable, body, ...meta });
}
