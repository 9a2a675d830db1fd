/**
 * Errors are values with a stable snake_case `code` (public API, listed in docs/errors.md)
 * and the HTTP status they surface as. One exception filter maps them to the JSON envelope.
 */
export class AppError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status: number = 400,
    readonly details?: unknown,
    /** Extra response headers, e.g. Retry-After. */
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'AppError';
  }
}

export interface ErrorBody {
  ok: false;
  error: string;
  message: string;
  /** Whether the same request may succeed later (every HTTP error body has it; libs/http's catalog). */
  retryable?: boolean;
  details?: unknown;
}

export function errorBody(code: string, message: string, details?: unknown): ErrorBody {
  return details === undefined ? { ok: false, error: code, message } : { ok: false, error: code, message, details };
}

export const notFound = (what: string) => new AppError('not_found', `${what} not found`, 404);
export const validationFailed = (message: string, details?: unknown) =>
  new AppError('validation_failed', message, 400, details);
