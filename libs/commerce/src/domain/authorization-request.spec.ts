import { AppError } from '@app/core';
import { AuthorizationRequest, parseAuthorizationRequest } from './authorization-request';

/** A valid request; override fields to make it invalid. */
const request = (over: Record<string, unknown> = {}): Record<string, unknown> => ({
  amount_cents: 1250,
  currency: 'USD',
  merchant_id: 'm_acme',
  purpose_tag: 'software',
  expiration_iso: '2026-12-31T23:59:59Z',
  ...over,
});

/** The AppError a bad request throws. */
const rejection = (input: unknown): AppError => {
  try {
    parseAuthorizationRequest(input);
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error(`accepted ${JSON.stringify(input)}`);
};
const failingFields = (input: unknown) => (rejection(input).details as Array<{ field: string }>).map((d) => d.field);

describe('payment_authorization.v1 request', () => {
  it('accepts a valid request and returns it unchanged', () => {
    const minimal = request();
    expect(parseAuthorizationRequest(minimal)).toEqual(minimal);
    const full: AuthorizationRequest = {
      amount_cents: 1,
      currency: 'JPY',
      merchant_id: 'merchant:eu-1.shop_42',
      purpose_tag: 'Travel.Air_fare-2',
      delegated_authority: 'did:cd:agent:7 (Bob’s travel agent)',
      expiration_iso: '2026-11-21T10:00:00.250+05:30',
      policy_id: 'travel-2026_Q4',
    };
    expect(parseAuthorizationRequest(full)).toEqual(full);
    expect(parseAuthorizationRequest(request({ amount_cents: Number.MAX_SAFE_INTEGER })).amount_cents).toBe(Number.MAX_SAFE_INTEGER);
    expect(parseAuthorizationRequest(request({ merchant_id: 'm'.repeat(128), purpose_tag: 'p'.repeat(64), delegated_authority: 'a'.repeat(256), policy_id: 'x'.repeat(64) }))).toBeTruthy();
  });

  it('accepts an expiry in the past: the evaluator blocks it with EXPIRED', () => {
    expect(parseAuthorizationRequest(request({ expiration_iso: '2001-01-01T00:00:00Z' })).expiration_iso).toBe('2001-01-01T00:00:00Z');
  });

  it('throws 400 validation_failed with details naming each failing field', () => {
    const err = rejection(request({ amount_cents: -5, currency: 'usd' }));
    expect(err).toMatchObject({ code: 'validation_failed', status: 400 });
    expect(err.message).toContain('amount_cents');
    expect(err.details).toEqual([
      { field: 'amount_cents', message: 'must be positive' },
      { field: 'currency', message: 'must be an ISO 4217 code: 3 upper-case letters' },
    ]);
  });

  it('needs a positive safe integer amount: no floats, zero, negatives, strings or huge numbers', () => {
    for (const bad of [0, -1, -0, 1.5, 0.1, 1e-7, Number.MAX_SAFE_INTEGER + 1, 1e300, '100', '1e3', null, true, [100], { v: 100 }, NaN, Infinity]) {
      expect([bad, failingFields(request({ amount_cents: bad }))]).toEqual([bad, ['amount_cents']]);
    }
    expect((rejection(request({ amount_cents: '100' })).details as Array<{ message: string }>)[0].message).toMatch(/positive integer/);
  });

  it('needs a known ISO 4217 currency in upper case; an unknown one is named', () => {
    for (const bad of ['usd', 'Usd', 'US', 'USDD', ' USD', 'XAU', 'XTS', '', 840, null]) {
      expect([bad, failingFields(request({ currency: bad }))]).toEqual([bad, ['currency']]);
    }
    const unknown = rejection(request({ currency: 'ABC' }));
    expect(unknown.details).toEqual([{ field: 'currency', message: 'must be an ISO 4217 currency code; "ABC" is not one' }]);
    for (const ok of ['EUR', 'JPY', 'KWD', 'CLF']) expect(parseAuthorizationRequest(request({ currency: ok })).currency).toBe(ok);
  });

  it('needs an opaque merchant id (1..128 of [A-Za-z0-9_.:-], no spaces)', () => {
    for (const bad of ['', 'Acme Corp', 'm/1', 'm?x', 'm'.repeat(129), 'mérchant', 'm\n', 42, null]) {
      expect([bad, failingFields(request({ merchant_id: bad }))]).toEqual([bad, ['merchant_id']]);
    }
  });

  it('needs a purpose tag (1..64 of [A-Za-z0-9_.-])', () => {
    for (const bad of ['', 'air travel', 'a:b', 'p'.repeat(65), 'ü', 7]) {
      expect([bad, failingFields(request({ purpose_tag: bad }))]).toEqual([bad, ['purpose_tag']]);
    }
  });

  it('takes an optional printable delegated_authority of 1..256 characters', () => {
    for (const bad of ['', ' agent', 'agent ', 'a\u0000b', 'a\nb', 'a\u200bb', 'a'.repeat(257), 7, null]) {
      expect([bad, failingFields(request({ delegated_authority: bad }))]).toEqual([bad, ['delegated_authority']]);
    }
  });

  it('needs expiration_iso to be a strict ISO-8601 date-time with a zone', () => {
    for (const bad of ['2026-13-01T00:00:00Z', '2026-02-30T00:00:00Z', '2026-12-31', '2026-12-31T10:00:00', 'garbage', '', 1767225600, null, '0000-01-01T00:00:00Z', '0001-01-01T00:59:59+01:00', '9999-12-31T23:59:59-00:01']) {
      expect([bad, failingFields(request({ expiration_iso: bad }))]).toEqual([bad, ['expiration_iso']]);
    }
    for (const ok of ['0001-01-01T00:00:00Z', '0001-01-01T01:00:00+01:00', '9999-12-31T23:59:59.999Z', '9999-12-31T23:59:59+01:00']) {
      expect(parseAuthorizationRequest(request({ expiration_iso: ok })).expiration_iso).toBe(ok);
    }
  });

  it('takes an optional policy_id of 1..64 of [A-Za-z0-9_-]', () => {
    for (const bad of ['', 'a.b', 'a b', 'x'.repeat(65), 5]) {
      expect([bad, failingFields(request({ policy_id: bad }))]).toEqual([bad, ['policy_id']]);
    }
  });

  it('reports missing fields as required', () => {
    const err = rejection({});
    expect(err.details).toEqual([
      { field: 'amount_cents', message: 'is required' },
      { field: 'currency', message: 'is required' },
      { field: 'merchant_id', message: 'is required' },
      { field: 'purpose_tag', message: 'is required' },
      { field: 'expiration_iso', message: 'is required' },
    ]);
  });

  it('refuses unknown fields, naming each', () => {
    expect(rejection(request({ delegated_authorty: 'a', extra: 1 })).details).toEqual([
      { field: 'delegated_authorty', message: 'is not a known field' },
      { field: 'extra', message: 'is not a known field' },
    ]);
  });

  it('refuses a body that is not an object', () => {
    for (const bad of [null, undefined, 'x', 5, [], [request()]]) {
      expect(rejection(bad)).toMatchObject({ code: 'validation_failed', status: 400, details: [{ field: '', message: 'must be a JSON object' }] });
    }
  });
});
