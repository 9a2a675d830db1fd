/**
 * What domain code (aggregates, policy evaluation) throws when a decision is refused: a stable
 * snake_case `code` (public API, docs/errors.md), a sentence, and optional details. It carries no
 * HTTP status: libs/http maps codes to statuses in one table (error-catalog.ts).
 */
export class DomainError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly details?: unknown,
    /** When the caller may retry, in seconds (surfaces as Retry-After). */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'DomainError';
  }
}
