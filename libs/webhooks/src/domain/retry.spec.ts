import { AttemptResult, decide, DEFAULT_RETRY_SCHEDULE_MS, failingTooLong, parseRetryAfter, RETRY_AFTER_CAP_MS } from './retry';

const now = new Date('2025-01-01T00:00:00Z');
const status = (statusCode: number, retryAfter: string | null = null): AttemptResult => ({ statusCode, error: null, errorKind: null, retryAfter });
const failure = (errorKind: AttemptResult['errorKind']): AttemptResult => ({ statusCode: null, error: 'x', errorKind, retryAfter: null });
const at = (ms: number) => new Date(now.getTime() + ms);

describe('retry decisions', () => {
  it('counts any 2xx as delivered', () => {
    for (const s of [200, 201, 202, 204, 299]) expect(decide(status(s), 1, DEFAULT_RETRY_SCHEDULE_MS, now)).toEqual({ outcome: 'delivered' });
  });

  it('retries network errors, timeouts, 429 and 5xx on the schedule', () => {
    expect(decide(failure('network'), 1, DEFAULT_RETRY_SCHEDULE_MS, now)).toEqual({ outcome: 'retry', nextAttemptAt: at(5_000) });
    expect(decide(failure('timeout'), 2, DEFAULT_RETRY_SCHEDULE_MS, now)).toEqual({ outcome: 'retry', nextAttemptAt: at(300_000) });
    expect(decide(status(429), 3, DEFAULT_RETRY_SCHEDULE_MS, now)).toEqual({ outcome: 'retry', nextAttemptAt: at(1_800_000) });
    expect(decide(status(503), 7, DEFAULT_RETRY_SCHEDULE_MS, now)).toEqual({ outcome: 'retry', nextAttemptAt: at(36_000_000) });
    expect(decide(status(500), 8, DEFAULT_RETRY_SCHEDULE_MS, now)).toEqual({ outcome: 'failed', reason: 'retries_exhausted', disableEndpoint: false });
  });

  it('fails other 4xx and redirects at once, and disables on 410', () => {
    for (const s of [400, 401, 403, 404, 408, 413, 422, 301, 302, 307, 308]) {
      expect(decide(status(s), 1, DEFAULT_RETRY_SCHEDULE_MS, now)).toEqual({ outcome: 'failed', reason: 'non_retryable', disableEndpoint: false });
    }
    expect(decide(status(410), 1, DEFAULT_RETRY_SCHEDULE_MS, now)).toEqual({ outcome: 'failed', reason: 'non_retryable', disableEndpoint: true });
    expect(decide(failure('target_not_allowed'), 1, DEFAULT_RETRY_SCHEDULE_MS, now)).toMatchObject({ outcome: 'failed', reason: 'non_retryable' });
  });

  it('never retries before Retry-After, in seconds or as a date, capped', () => {
    expect(decide(status(429, '120'), 1, DEFAULT_RETRY_SCHEDULE_MS, now)).toEqual({ outcome: 'retry', nextAttemptAt: at(120_000) });
    expect(decide(status(503, '1'), 1, DEFAULT_RETRY_SCHEDULE_MS, now)).toEqual({ outcome: 'retry', nextAttemptAt: at(5_000) }); // the schedule is longer
    expect(decide(status(503, new Date(now.getTime() + 60_000).toUTCString()), 1, DEFAULT_RETRY_SCHEDULE_MS, now)).toEqual({ outcome: 'retry', nextAttemptAt: at(60_000) });
    expect(parseRetryAfter('99999999', now)).toBe(RETRY_AFTER_CAP_MS);
    expect(parseRetryAfter('Wed, 21 Oct 2015 07:28:00 GMT', now)).toBe(0); // in the past
    for (const v of [null, '', 'soon', '-5', '1.5', '2025-01-02']) expect(parseRetryAfter(v, now)).toBeNull();
  });

  it('disables an endpoint only after the configured days of nothing but failures', () => {
    expect(failingTooLong(null, now, 5)).toBe(false);
    expect(failingTooLong(new Date(now.getTime() - 5 * 86_400_000 + 1), now, 5)).toBe(false);
    expect(failingTooLong(new Date(now.getTime() - 5 * 86_400_000), now, 5)).toBe(true);
  });
});
