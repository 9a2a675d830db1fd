import { randomBytes } from 'node:crypto';
import { AccessService } from '@app/access';
import { SqlDatabase } from '@app/event-store';
import { startTestApp, TestApp } from './support/test-app';

/** The public verification page GET /verify/{id}, over HTTP (issue 4, item 8). */
describe('verify page (e2e)', () => {
  let t: TestApp;
  let access: AccessService;
  beforeAll(async () => {
    t = await startTestApp({ TRUST_PROXY: 'true' });
    access = t.app.get(AccessService);
  });
  afterAll(async () => {
    await t?.close();
  });

  const ip = () => `10.${randomBytes(1)[0]}.${randomBytes(1)[0]}.${randomBytes(1)[0]}`;
  const issue = async (body: { content: string; filename?: string; type?: string }) => {
    const org = await access.createOrganization(`verify-page-${randomBytes(3).toString('hex')}`);
    const { key } = await access.createApiKey(org.org_id, { scopes: ['certificates:write'], mode: 'test' });
    const res = await t.app.inject({ method: 'POST', url: '/api/notary/create', headers: { authorization: `Bearer ${key}`, 'x-forwarded-for': ip() }, payload: body });
    expect(res.statusCode).toBe(200);
    return res.json() as { certificate_id: string; dataset_hash: string; signing_key_id: string; issued_at: string; verify_url: string };
  };
  const get = (url: string, from = ip()) => t.app.inject({ method: 'GET', url, headers: { 'x-forwarded-for': from } });
  const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  const dataOf = (page: string) => JSON.parse(/<script type="application\/json" id="certificate-data">([\s\S]*?)<\/script>/.exec(page)![1]);

  const expectPageHeaders = (headers: Record<string, unknown>) => {
    expect(headers['content-type']).toBe('text/html; charset=utf-8');
    const csp = String(headers['content-security-policy']);
    // Its own two inline scripts by hash, and same-origin scripts: the SDK's browser bundle.
    expect(csp).toMatch(/^default-src 'none'; script-src 'self' 'sha256-[A-Za-z0-9+/]+=*' 'sha256-[A-Za-z0-9+/]+=*'; style-src 'sha256-[A-Za-z0-9+/]+=*';/);
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|https?:|\*/);
    expect(headers['x-content-type-options']).toBe('nosniff');
  };

  it('shows the verdict, issuer, dates, hash, signing key and the signed JSON of a real certificate', async () => {
    const cert = await issue({ content: JSON.stringify({ model: 'm1', accuracy: 0.93 }), filename: 'metrics.json' });
    expect(cert.verify_url).toBe(`${t.config.BASE_URL}/verify/${cert.certificate_id}`);
    const res = await get(`/verify/${cert.certificate_id}`);
    expect(res.statusCode).toBe(200);
    expectPageHeaders(res.headers);
    expect(res.headers['cache-control']).toBe('no-cache');
    const page = res.body;
    const signed = (await get(`/api/certificates/${cert.certificate_id}/signed-payload`)).json();
    const api = (await get(`/api/verify/${cert.certificate_id}`)).json();

    expect(page).toMatch(/^<!doctype html>/);
    expect(page).toContain('<div class="verdict ok" id="verdict" data-verified="true"><strong>Verified</strong>');
    expect(page).toContain(`<th scope="row">Issuer</th><td>${escape(signed.payload.issuer)}</td>`);
    expect(page).toContain(`<time datetime="${cert.issued_at}">${cert.issued_at}</time>`);
    expect(page).toContain(`<code id="dataset-hash">${cert.dataset_hash}</code>`);
    expect(page).toContain(`<code id="key-id">${cert.signing_key_id}</code> <span id="key-status">active</span>`);
    expect(page).toContain(api.checks.canonical_payload_hash);
    expect(page).toContain(`<pre id="certificate-json">${escape(JSON.stringify(signed, null, 2))}</pre>`);
    // The embedded data (what the in-browser check, and later the SDK, read).
    const data = dataOf(page);
    expect(data.certificate).toEqual(signed);
    expect(data.key).toMatchObject({ key_id: cert.signing_key_id, status: 'active', algorithm: 'Ed25519' });
    expect(data.verification).toEqual(api);
  });

  it('says which check failed for a tampered certificate', async () => {
    const cert = await issue({ content: 'rows,cols\n1,2\n' });
    await t.app.get(SqlDatabase).query(`UPDATE certificates SET payload = (payload::jsonb || '{"rows": 999}')::json WHERE certificate_id = $1`, [cert.certificate_id]);
    const res = await get(`/verify/${cert.certificate_id}`);
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('<div class="verdict bad" id="verdict" data-verified="false"><strong>Not verified</strong><p>Failed check: Ed25519 signature (<code>signature_invalid</code>)');
    expect(res.body).toContain('<tr class="check" data-state="fail"><th scope="row">Ed25519 signature</th>');
    expect(dataOf(res.body).verification).toMatchObject({ verified: false, reason: 'signature_invalid' });
  });

  it('answers an HTML 404 page for an unknown id and an HTML 400 page for a malformed one', async () => {
    const unknown = await get('/verify/00000000-0000-4000-8000-000000000000');
    expect(unknown.statusCode).toBe(404);
    expectPageHeaders(unknown.headers);
    expect(unknown.headers['cache-control']).toBe('no-store');
    expect(unknown.body).toContain('<h1>Certificate not found</h1>');
    expect(unknown.body).toContain('00000000-0000-4000-8000-000000000000');
    expect(unknown.body).toContain('<code id="error-code">not_found</code>');

    for (const bad of ['not-a-uuid', '123', '%3Cscript%3Ealert(1)%3C%2Fscript%3E']) {
      const res = await get(`/verify/${bad}`);
      expect(res.statusCode).toBe(400);
      expectPageHeaders(res.headers);
      expect(res.body).toContain('<h1>Malformed certificate id</h1>');
      expect(res.body).not.toContain('<script>');
    }
    expect((await get('/verify/%3Cscript%3Ealert(1)%3C%2Fscript%3E')).body).toContain('&#34;&#60;script&#62;alert(1)&#60;/script&#62;&#34; is not a certificate id');
  });

  it('escapes certificate fields: content, file name and type holding markup', async () => {
    const cert = await issue({
      content: JSON.stringify({ note: '</pre><script>alert("content")</script>' }),
      filename: '<script>alert("name")</script>.json',
      type: '<img src=x onerror=alert(1)>',
    });
    const page = (await get(`/verify/${cert.certificate_id}`)).body;
    expect(page).not.toMatch(/<script>alert|<img src=x/);
    expect(page).toContain('<th scope="row">File name</th><td>&#60;script&#62;alert(&#34;name&#34;)&#60;/script&#62;.json</td>');
    expect(page).toContain('<th scope="row">Content type</th><td>&#60;img src=x onerror=alert(1)&#62;</td>');
    // Inside the JSON element, < is \u003c so nothing can close it early; the data is intact.
    expect(page).toContain('"filename":"\\u003cscript\\u003ealert(\\"name\\")\\u003c/script\\u003e.json"');
    expect(dataOf(page).certificate.payload).toMatchObject({ filename: '<script>alert("name")</script>.json', content_type: '<img src=x onerror=alert(1)>' });
    // Only these script elements: the data, the page's own two (hash-allowed) scripts, and the SDK bundle when it is built.
    const scripts = page.match(/<script[^>]*>/g)!;
    expect(scripts.filter((s) => !/^<script src="\/assets\/sigil\.browser\.js\?v=[0-9a-f]{16}">$/.test(s))).toEqual(['<script type="application/json" id="certificate-data">', '<script>', '<script>']);
  });

  it('is throttled as a certificate fetch: the certificate_fetch_window bucket, not verification', async () => {
    const cert = await issue({ content: 'throttle me' });
    const from = ip();
    const first = await get(`/verify/${cert.certificate_id}`, from);
    expect(first.headers['ratelimit-limit']).toBe('60');
    const remaining = Number(first.headers['ratelimit-remaining']);
    // GET /api/certificates/{id} counts in the same per-IP bucket as the page.
    expect(Number((await get(`/api/certificates/${cert.certificate_id}`, from)).headers['ratelimit-remaining'])).toBe(remaining - 1);
    // GET /api/verify/{id} is verification: its own bucket, untouched by the page.
    expect((await get(`/api/verify/${cert.certificate_id}`, from)).headers['ratelimit-remaining']).toBe('59');
    for (let i = 0; i < remaining - 1; i++) expect((await get(`/verify/${cert.certificate_id}`, from)).statusCode).toBe(200);
    const limited = await get(`/verify/${cert.certificate_id}`, from);
    expect(limited.statusCode).toBe(429);
    expectPageHeaders(limited.headers);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(limited.body).toContain('<h1>Too many requests</h1>');
    expect(limited.body).toContain('<code id="error-code">rate_limited</code>');
  });
});
