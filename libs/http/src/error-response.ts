import { HttpException } from '@nestjs/common';
import { AppError, DomainError, ErrorBody } from '@app/core';
import { CanonicalizationError } from '@app/crypto';
import { EventIdConflict, InvalidAppend, WrongExpectedVersion } from '@app/event-store';
import { isRetryableError, statusOfDomainError } from './error-catalog';

export interface ErrorResponse {
  status: number;
  body: ErrorBody;
  headers: Record<string, string>;
}

const CODE_BY_STATUS: Record<number, [string, string]> = {
  400: ['bad_request', 'The request is malformed'],
  401: ['auth_required', 'Authentication is required'],
  403: ['forbidden', 'This credential may not do that'],
  404: ['not_found', 'Not found'],
  405: ['method_not_allowed', 'Method not allowed'],
  406: ['not_acceptable', 'Not acceptable'],
  408: ['request_timeout', 'The request took too long to arrive'],
  409: ['conflict', 'The request conflicts with the current state'],
  411: ['length_required', 'Content-Length is required'],
  413: ['payload_too_large', 'The request body is too large'],
  414: ['uri_too_long', 'The URI is too long'],
  415: ['unsupported_media_type', 'Unsupported Content-Type; send application/json'],
  422: ['unprocessable_entity', 'The request cannot be processed'],
  429: ['rate_limited', 'Too many requests'],
  431: ['headers_too_large', 'Request headers are too large'],
  503: ['service_unavailable', 'The service is unavailable'],
};

/**
 * The body of every error response: `{ ok: false, error, message, retryable, details? }`, the
 * flag from the catalog (or, for a code outside it, true for 429 and 503 only).
 */
export function errorEnvelope(code: string, message: string, status: number, details?: unknown): ErrorBody {
  const body: ErrorBody = { ok: false, error: code, message, retryable: isRetryableError(code, status) };
  if (details !== undefined) body.details = details;
  return body;
}

const fromStatus = (status: number, message?: string, details?: unknown): ErrorResponse => {
  const [code, dflt] = CODE_BY_STATUS[status] ?? (status >= 500 ? ['internal_error', 'Internal server error'] : ['bad_request', 'Bad request']);
  return { status, body: errorEnvelope(code, message ?? dflt, status, details), headers: {} };
};

function fromFastify(status: number, message: string): ErrorResponse {
  if (status === 400 && /JSON|prototype|constructor/i.test(message)) {
    return { status, body: errorEnvelope('invalid_json', 'The request body is not valid JSON', status), headers: {} };
  }
  return fromStatus(status);
}

/**
 * Maps anything thrown while serving a request to the JSON envelope
 * `{ ok: false, error, message, retryable, details? }`. Unknown errors become a bare 500: no stack,
 * no internal message reaches the client.
 */
export function toErrorResponse(err: unknown): ErrorResponse {
  if (err instanceof AppError) {
    return { status: err.status, body: errorEnvelope(err.code, err.message, err.status, err.details), headers: { ...err.headers } };
  }
  if (err instanceof DomainError) {
    const headers: Record<string, string> = err.retryAfterSeconds !== undefined ? { 'Retry-After': String(err.retryAfterSeconds) } : {};
    const status = statusOfDomainError(err.code);
    return { status, body: errorEnvelope(err.code, err.message, status, err.details), headers };
  }
  if (err instanceof WrongExpectedVersion) {
    return { status: 409, body: errorEnvelope('concurrent_modification', 'The resource was changed concurrently; retry', 409), headers: {} };
  }
  if (err instanceof EventIdConflict) return { status: 409, body: errorEnvelope(err.code, err.message, 409), headers: {} };
  if (err instanceof InvalidAppend) return { status: 400, body: errorEnvelope(err.code, err.message, 400), headers: {} };
  if (err instanceof CanonicalizationError) return { status: 400, body: errorEnvelope('invalid_json', err.message, 400), headers: {} };
  if (err instanceof HttpException) {
    const status = err.getStatus();
    const response = err.getResponse();
    // Nest turns Fastify's own errors (body parsing, limits) into HttpException(message, status).
    if (typeof response === 'string') return fromFastify(status, response);
    const message = typeof response === 'object' && response && 'message' in response ? String((response as { message: unknown }).message) : err.message;
    // Nest's router 404 says "Cannot GET /x"; ours is the same for every unknown path.
    return fromStatus(status, status === 404 ? 'No such resource or route' : message);
  }
  const fastifyError = err as { statusCode?: number; message?: string };
  if (typeof fastifyError?.statusCode === 'number' && fastifyError.statusCode >= 400 && fastifyError.statusCode < 500) {
    return fromFastify(fastifyError.statusCode, fastifyError.message ?? '');
  }
  if (err instanceof SyntaxError) return { status: 400, body: errorEnvelope('invalid_json', 'The request body is not valid JSON', 400), headers: {} };
  return fromStatus(500);
}
