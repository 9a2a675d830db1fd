import { bearerMatches, isLoopbackHost, METRICS_UNAUTHORIZED, metricsExposure, metricsExposureWarning } from './exposure';
import { Metrics } from './metrics';
import { MetricsServer } from './metrics-server';

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

describe('metricsExposureWarning (logged at start)', () => {
  it('warns when METRICS_PORT serves without METRICS_TOKEN on a HOST that is not loopback', () => {
    for (const HOST of ['0.0.0.0', '::', '10.0.0.5', 'sigil.example.com']) {
      expect(metricsExposureWarning({ METRICS_PORT: 9464, HOST })).toMatch(/METRICS_TOKEN/);
    }
  });

  it('is quiet with a token, on loopback, or without METRICS_PORT', () => {
    expect(metricsExposureWarning({ METRICS_PORT: 9464, METRICS_TOKEN: TOKEN, HOST: '0.0.0.0' })).toBeNull();
    for (const HOST of ['127.0.0.1', '127.1.2.3', '::1', '[::1]', 'localhost', 'LOCALHOST']) {
      expect(isLoopbackHost(HOST)).toBe(true);
      expect(metricsExposureWarning({ METRICS_PORT: 9464, HOST })).toBeNull();
    }
    expect(metricsExposureWarning({ HOST: '0.0.0.0' })).toBeNull();
  });

  it('the METRICS_PORT listener logs it when it starts', async () => {
    const warnings: string[] = [];
    const logger = { warn: (_obj: object, msg: string) => void warnings.push(msg) };
    const open = new MetricsServer(new Metrics({ defaultMetrics: false }), { METRICS_PORT: 0, HOST: '0.0.0.0' } as never, logger);
    await open.onApplicationBootstrap();
    await open.onApplicationShutdown();
    const quiet = new MetricsServer(new Metrics({ defaultMetrics: false }), { METRICS_PORT: 0, HOST: '127.0.0.1' } as never, logger);
    await quiet.onApplicationBootstrap();
    await quiet.onApplicationShutdown();
    expect(warnings).toEqual([expect.stringMatching(/^GET \/metrics on METRICS_PORT 0 is open to anyone/)]);
  });
});
