import { bearerMatches, METRICS_UNAUTHORIZED, metricsExposure } from './exposure';

const TOKEN = 'a-metrics-token-of-some-length';

describe('metricsExposure', () => {
  it('is off unless METRICS_PORT or METRICS_TOKEN is set', () => {
    expect(metricsExposure({})).toEqual({ mode: 'off' });
  });

  it('serves on the api port behind the token when only METRICS_TOKEN is set', () => {
    expect(metricsExposure({ METRICS_TOKEN: TOKEN })).toEqual({ mode: 'main_port', token: TOKEN });
  });

  it('serves on its own port when METRICS_PORT is set, with the token if there is one', () => {
    expect(metricsExposure({ METRICS_PORT: 9464 })).toEqual({ mode: 'own_port', port: 9464, token: null });
    expect(metricsExposure({ METRICS_PORT: 0, METRICS_TOKEN: TOKEN })).toEqual({ mode: 'own_port', port: 0, token: TOKEN });
  });
});

describe('bearerMatches', () => {
  it('accepts exactly "Bearer <token>" (the scheme in any case)', () => {
    expect(bearerMatches(`Bearer ${TOKEN}`, TOKEN)).toBe(true);
    expect(bearerMatches(`bearer ${TOKEN}`, TOKEN)).toBe(true);
  });

  it('refuses anything else', () => {
    for (const header of [undefined, '', 'Bearer', 'Bearer ', TOKEN, `Basic ${TOKEN}`, `Bearer ${TOKEN}x`, `Bearer ${TOKEN.slice(1)}`, `Bearer ${TOKEN} extra`, [`Bearer ${TOKEN}`]]) {
      expect(bearerMatches(header, TOKEN)).toBe(false);
    }
  });

  it('never matches an empty header against any token', () => {
    expect(bearerMatches('Bearer ', '')).toBe(false);
  });
});

describe('METRICS_UNAUTHORIZED', () => {
  it('is 401 auth_required in the standard envelope, with a Bearer challenge', () => {
    expect(METRICS_UNAUTHORIZED.status).toBe(401);
    expect(METRICS_UNAUTHORIZED.headers['www-authenticate']).toBe('Bearer realm="metrics"');
    expect(JSON.parse(METRICS_UNAUTHORIZED.body)).toEqual({ ok: false, error: 'auth_required', message: expect.any(String), retryable: false });
  });
});
