import { AccessService } from '@app/access';
import { SigningKeyStore } from '@app/notary';
import { isolatedEnv } from './support/isolated-env';
import { startTestApp, TestApp } from './support/test-app';

/**
 * GET /api/badge/{certificate_id}: a certificate's verification as a badge, JSON (shields.io's
 * endpoint format plus the verdict) or `.svg`, the image a README embeds. It follows the key's
 * status, so this suite has its own schema (it revokes the signing key).
 */
describe('certificate badges (e2e)', () => {
  let t: TestApp;
  let iso: Awaited<ReturnType<typeof isolatedEnv>>;
  let key: string;

  beforeAll(async () => {
    iso = await isolatedEnv();
    t = await startTestApp({ ...iso.env, RATE_LIMITS: 'off' });
    const access = t.app.get(AccessService);
    const org = await access.createOrganization('badges');
    key = (await access.createApiKey(org.org_id, { scopes: ['certificates:write'], mode: 'test' })).key;
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await iso?.dispose();
  });

  const get = (url: string) => t.app.inject({ method: 'GET', url });
  const issue = async (content: string) =>
    (await t.app.inject({ method: 'POST', url: '/api/notary/create', payload: { content }, headers: { authorization: `Bearer ${key}` } })).json().certificate_id as string;

  it('a verified certificate: JSON in shields.io endpoint format with the verdict, and an SVG image', async () => {
    const id = await issue('badge me');
    const json = await get(`/api/badge/${id}`);
    expect(json.statusCode).toBe(200);
    expect(json.headers['cache-control']).toBe('public, max-age=300');
    expect(json.json()).toEqual({
      schemaVersion: 1,
      state: 'verified',
      label: 'sigil',
      message: 'verified',
      color: '#4c1',
      certificate_id: id,
      verified: true,
      schema_version: 'service.cert.v1',
      issued_at: expect.any(String),
      key_id: expect.any(String),
      reason: null,
      verify_url: `${t.config.BASE_URL}/verify/${id}`,
    });
    expect((await get(`/api/badge/${id}.json`)).json()).toMatchObject({ state: 'verified' });

    const svg = await get(`/api/badge/${id}.svg`);
    expect(svg.statusCode).toBe(200);
    expect(svg.headers['content-type']).toBe('image/svg+xml; charset=utf-8');
    expect(svg.headers['content-security-policy']).toContain("default-src 'none'");
    expect(svg.body).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    expect(svg.body).toContain('<title>sigil: verified</title>');
    expect(svg.body).not.toMatch(/<script/i);
  });

  it('unknown: 404 (the envelope for JSON, an image saying so for SVG); malformed: 400 validation_failed', async () => {
    const unknown = '00000000-0000-4000-8000-000000000000';
    const json = await get(`/api/badge/${unknown}`);
    expect(json.statusCode).toBe(404);
    expect(json.json()).toMatchObject({ ok: false, error: 'not_found' });
    const svg = await get(`/api/badge/${unknown}.svg`);
    expect(svg.statusCode).toBe(404);
    expect(svg.body).toContain('<title>sigil: not found</title>');
    for (const bad of ['not-a-uuid', `${unknown}.png`, `${unknown}.svg.svg`, '..%2F..%2Fetc']) {
      const res = await get(`/api/badge/${bad}`);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ ok: false, error: 'validation_failed' });
    }
  });

  it('follows the signing key: a certificate signed before its key was revoked still verifies, and the badge says the key is revoked', async () => {
    const id = await issue('signed before the revocation');
    const keys = t.app.get(SigningKeyStore);
    const signingKey = (await get(`/api/badge/${id}`)).json().key_id as string;
    await keys.rotate();
    await keys.revoke(signingKey);
    const after = (await get(`/api/badge/${id}`)).json();
    expect(after).toMatchObject({ state: 'revoked_key', message: 'verified, key revoked', verified: true, reason: 'signed_by_revoked_key_before_revocation' });
    expect((await get(`/api/badge/${id}.svg`)).body).toContain('verified, key revoked');
    // A certificate from the new key is simply verified.
    expect((await get(`/api/badge/${await issue('after the rotation')}`)).json()).toMatchObject({ state: 'verified' });
  });
});
