import { UNMATCHED_ROUTE } from '@app/metrics';
import { startTestApp, TestApp } from './support/test-app';

/**
 * What the app refuses on a console path before any console route runs (no such page, a path that
 * is not valid percent-encoding, a %00 in the URL, a form over the body limit) is the console's
 * error page, with the status and message the API's envelope would carry: a person's browser shows
 * it. The API's paths keep the JSON envelope for the same refusals.
 */
describe('console: refusals made before a console route runs are pages (e2e)', () => {
  let t: TestApp;
  const TOKEN = 'a-metrics-token-of-sixteen-characters';

  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMITS: 'off', METRICS_TOKEN: TOKEN });
  }, 60_000);
  afterAll(async () => {
    await t?.close();
  });

  const form = { 'content-type': 'application/x-www-form-urlencoded' };
  const cases = [
    { name: 'a page that does not exist', method: 'GET', url: '/console/no-such-page', status: 404, message: 'There is nothing here, or it belongs to another organization.' },
    { name: 'a method the page does not take', method: 'PUT', url: '/console/sign-in', status: 404, message: 'There is nothing here, or it belongs to another organization.' },
    { name: 'a path that is not valid percent-encoding', method: 'GET', url: '/console/transactions/%ED%A0%80', status: 400, message: 'The request path is malformed' },
    { name: 'a %00 in the URL', method: 'GET', url: '/console/transactions?q=%00', status: 400, message: 'The request URL holds a NUL character (%00), which no parameter may contain' },
    { name: 'a form over the body limit', method: 'POST', url: '/console/sign-in', headers: form, payload: `email=${'a'.repeat(2_000_000)}`, status: 413, message: 'The request body is too large' },
  ] as const;

  it.each(cases)('$name: $status, as a page saying why', async (c) => {
    const res = await t.app.inject({ method: c.method, url: c.url, headers: 'headers' in c ? c.headers : {}, payload: 'payload' in c ? c.payload : undefined });
    expect(res.statusCode).toBe(c.status);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['content-security-policy']).toContain("default-src 'none'");
    expect(res.headers['x-frame-options']).toBe('DENY');
    expect(res.headers['x-request-id']).toEqual(expect.any(String));
    expect(res.body).toMatch(/^<!doctype html>/);
    expect(res.body).toContain(`data-status="${c.status}"`);
    expect(res.body).toContain(c.message.replace(/'/g, '&#39;'));
    expect(res.body).toContain('href="/console/sign-in"');
  });

  it('the API keeps its JSON envelope for the same refusals', async () => {
    for (const [url, status, error] of [
      ['/api/no-such-route', 404, 'not_found'],
      ['/api/certificates/%ED%A0%80', 400, 'bad_request'],
      ['/v1/registry?q=%00', 400, 'bad_request'],
      ['/consoles', 404, 'not_found'],
    ] as const) {
      const res = await t.app.inject({ method: 'GET', url });
      expect([url, res.statusCode, res.headers['content-type']]).toEqual([url, status, 'application/json; charset=utf-8']);
      expect(res.json()).toMatchObject({ ok: false, error });
    }
  });

  it('a page the console serves is not touched, and the refusals are still counted in the metrics', async () => {
    const page = await t.app.inject({ method: 'GET', url: '/console/sign-in' });
    expect(page.statusCode).toBe(200);
    expect(page.body).not.toContain('id="error"');
    const scrape = await t.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } });
    expect(scrape.statusCode).toBe(200);
    // The malformed path never reached a route: counted as unmatched, with its status.
    const unmatched = (method: string, status: number) => new RegExp(`sigil_http_request_duration_seconds_count\\{route="${UNMATCHED_ROUTE}",method="${method}",status="${status}"\\} [1-9]`);
    expect(scrape.body).toMatch(unmatched('GET', 400));
    expect(scrape.body).toMatch(unmatched('GET', 404));
  });
});
