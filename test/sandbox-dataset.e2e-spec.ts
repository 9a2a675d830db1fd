import { createHash, randomBytes } from 'node:crypto';
import { startTestApp, TestApp } from './support/test-app';

/** POST /api/sandbox/datasets: try issuance and verification with no account; 10 per 24 h per IP. */
describe('sandbox dataset generation (e2e)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ TRUST_PROXY: 'true' });
  }, 60_000);
  afterAll(() => t?.close());

  const ip = () => `10.${randomBytes(1)[0]}.${randomBytes(1)[0]}.${randomBytes(1)[0]}`;
  const generate = (from = ip()) => t.app.inject({ method: 'POST', url: '/api/sandbox/datasets', headers: { 'x-forwarded-for': from } });

  it('certifies a synthetic CSV on a fresh sandbox organization; its bytes verify against the certificate', async () => {
    const res = await generate();
    expect(res.statusCode).toBe(201);
    const { dataset, certificate, sandbox_organization_id } = res.json();
    expect(dataset).toMatchObject({ content_type: 'text/csv', rows: 24, columns: ['date', 'station', 'temperature_c', 'rainfall_mm'], filename: expect.stringMatching(/^sandbox-weather-[0-9a-f]{8}\.csv$/) });
    const sha256 = `sha256:${createHash('sha256').update(dataset.content, 'utf8').digest('hex')}`;
    expect(certificate.dataset_hash).toBe(sha256);
    const verified = await t.app.inject({ method: 'POST', url: '/api/verify/hash', payload: { cert_id: certificate.certificate_id, sha256 }, headers: { 'x-forwarded-for': ip() } });
    expect(verified.json()).toMatchObject({ verified: true, hash_matched: true, signature_valid: true });
    const tampered = `${dataset.content}2026-01-07,north,99.9,0.0\n`;
    const wrong = await t.app.inject({ method: 'POST', url: '/api/verify/hash', payload: { cert_id: certificate.certificate_id, sha256: createHash('sha256').update(tampered).digest('hex') }, headers: { 'x-forwarded-for': ip() } });
    expect(wrong.json()).toMatchObject({ verified: false, error: 'hash_mismatch' });
    expect((await t.app.inject({ method: 'GET', url: certificate.verify_url.replace(t.config.BASE_URL, ''), headers: { 'x-forwarded-for': ip() } })).statusCode).toBe(200);

    const again = (await generate()).json();
    expect(again.sandbox_organization_id).not.toBe(sandbox_organization_id);
    expect(again.certificate.certificate_id).not.toBe(certificate.certificate_id);
  });

  it('allows 10 per IP, then 429 with Retry-After', async () => {
    const from = ip();
    for (let i = 0; i < 10; i++) expect((await generate(from)).statusCode).toBe(201);
    const limited = await generate(from);
    expect(limited.statusCode).toBe(429);
    expect(limited.json()).toMatchObject({ ok: false, error: 'rate_limited' });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
  });
});
