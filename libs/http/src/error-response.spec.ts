import { HttpException } from '@nestjs/common';
import { AppError, DomainError } from '@app/core';
import { WrongExpectedVersion } from '@app/event-store';
import { toErrorResponse } from './error-response';

describe('toErrorResponse: every error body carries the retryable flag', () => {
  it('takes the flag from the catalog for domain and application errors', () => {
    expect(toErrorResponse(new DomainError('concurrent_modification', 'changed'))).toEqual({
      status: 409,
      body: { ok: false, error: 'concurrent_modification', message: 'changed', retryable: true },
      headers: {},
    });
    expect(toErrorResponse(new DomainError('execution_in_progress', 'settling', undefined, 2))).toMatchObject({
      status: 409,
      body: { error: 'execution_in_progress', retryable: true },
      headers: { 'Retry-After': '2' },
    });
    expect(toErrorResponse(new DomainError('authorization_not_pending', 'decided', { status: 'approved' })).body).toEqual({
      ok: false,
      error: 'authorization_not_pending',
      message: 'decided',
      retryable: false,
      details: { status: 'approved' },
    });
    expect(toErrorResponse(new AppError('idempotency_request_in_progress', 'running', 409, undefined, { 'retry-after': '1' }))).toMatchObject({
      body: { retryable: true },
      headers: { 'retry-after': '1' },
    });
    expect(toErrorResponse(new AppError('settlement_failed', 'not settled', 502, { retryable: true })).body).toMatchObject({ retryable: true, details: { retryable: true } });
    // A code answered with another status than the catalog's keeps the catalog's flag.
    expect(toErrorResponse(new AppError('payment_declined', 'declined', 409)).body).toMatchObject({ error: 'payment_declined', retryable: false });
    expect(toErrorResponse(new AppError('validation_failed', 'bad', 400, [{ field: 'x', message: 'm' }])).body.retryable).toBe(false);
  });

  it('flags errors built outside the catalog: a concurrent append, Fastify and Nest statuses, a bare 500', () => {
    expect(toErrorResponse(new WrongExpectedVersion('s', 1, 2)).body).toMatchObject({ error: 'concurrent_modification', retryable: true });
    expect(toErrorResponse(new HttpException('Service Unavailable', 503))).toMatchObject({ status: 503, body: { error: 'service_unavailable', retryable: true } });
    expect(toErrorResponse(new HttpException('Too Many Requests', 429)).body).toMatchObject({ error: 'rate_limited', retryable: true });
    expect(toErrorResponse({ statusCode: 415, message: 'Unsupported Media Type' })).toMatchObject({ status: 415, body: { error: 'unsupported_media_type', retryable: false } });
    expect(toErrorResponse({ statusCode: 408, message: 'timeout' }).body).toMatchObject({ error: 'request_timeout', retryable: false });
    expect(toErrorResponse(new Error('boom'))).toEqual({ status: 500, body: { ok: false, error: 'internal_error', message: 'Internal server error', retryable: false }, headers: {} });
    // A code missing from the catalog: a 409 refusal, not retryable.
    expect(toErrorResponse(new DomainError('no_such_code', 'x'))).toMatchObject({ status: 409, body: { retryable: false } });
  });
});
