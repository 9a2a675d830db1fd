import { isStorableStatus, methodPath, parseIdempotencyKey, requestHash } from './idempotency-key';

describe('idempotency keys', () => {
  it('accepts 1..255 printable ASCII characters', () => {
    for (const ok of ['a', 'order-77', 'x'.repeat(255), 'with spaces and ~!@#$%^&*()', '550e8400-e29b-41d4-a716-446655440000']) {
      expect(parseIdempotencyKey(ok)).toBe(ok);
    }
  });

  it('rejects anything else with 400 invalid_idempotency_key', () => {
    for (const bad of ['', 'x'.repeat(256), 'tab\there', 'nl\n', 'caf\u00e9', '\u{1F600}', ['a', 'b'], 42, undefined]) {
      expect(() => parseIdempotencyKey(bad)).toThrow(expect.objectContaining({ code: 'invalid_idempotency_key', status: 400 }));
    }
  });

  it('fingerprints a body by its RFC 8785 form: key order and number spelling do not matter', () => {
    expect(requestHash({ b: 1, a: [1, { y: 2, x: 1 }] })).toBe(requestHash({ a: [1, { x: 1, y: 2 }], b: 1.0 }));
    expect(requestHash({ a: 1 })).not.toBe(requestHash({ a: 2 }));
    expect(requestHash(undefined)).toBe(requestHash(null));
    expect(requestHash({ a: 1 })).toMatch(/^[0-9a-f]{64}$/);
  });

  it('covers the query string too when a route passes one; without one the fingerprint is the body\'s alone', () => {
    const body = { a: 1 };
    expect(requestHash(body, {})).toBe(requestHash(body));
    expect(requestHash(body, { since: '2026-01-01T00:00:00Z' })).not.toBe(requestHash(body));
    expect(requestHash(body, { since: '2026-01-01T00:00:00Z' })).not.toBe(requestHash(body, { since: '2026-01-02T00:00:00Z' }));
    expect(requestHash(body, { b: '2', a: '1' })).toBe(requestHash(body, { a: '1', b: '2' }));
    // A body that spells out a query is still another request than a body with a query.
    expect(requestHash({ query: { since: 'x' } })).not.toBe(requestHash(null, { since: 'x' }));
  });

  it('binds a key to the method and path, without the query string', () => {
    expect(methodPath('post', '/api/cdp/authorize?x=1')).toBe('POST /api/cdp/authorize');
  });

  it('stores domain refusals, not input errors, transient conflicts, 5xx or unknown errors', () => {
    expect(isStorableStatus(404)).toBe(true);
    expect(isStorableStatus(402)).toBe(true);
    expect(isStorableStatus(422)).toBe(true);
    expect(isStorableStatus(400)).toBe(false);
    expect(isStorableStatus(409)).toBe(false);
    expect(isStorableStatus(429)).toBe(false);
    expect(isStorableStatus(503)).toBe(false);
  });
});
