import { randomBytes } from 'node:crypto';
import { AccessService } from '@app/access';
import { startTestApp, TestApp } from './support/test-app';

/**
 * The console's cookies when served over HTTPS (BASE_URL https://…): `__Host-` names, Secure,
 * Path=/, no Domain, and a plain-named cookie (which a sibling subdomain could plant) is not read.
 * The HTTP names and attributes are checked in test/console.e2e-spec.ts. Both modes.
 */
describe('console cookies over HTTPS (e2e)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMITS: 'off', BASE_URL: 'https://sigil.example' });
  }, 60_000);
  afterAll(async () => {
    await t?.close();
  });

  const setCookies = (res: { headers: Record<string, unknown> }) => ([] as string[]).concat((res.headers['set-cookie'] as string[] | string | undefined) ?? []);

  it('signs in with __Host- cookies, and ignores plain-named ones', async () => {
    const access = t.app.get(AccessService);
    const org = await access.createOrganization(`cookies-${randomBytes(3).toString('hex')}`);
    const admin = await access.createApiKey(org.org_id, { scopes: ['users:manage', 'payments:read', 'receipts:read', 'approvals:manage'], mode: 'test' });
    const invited = await t.app.inject({ method: 'POST', url: '/api/users', headers: { authorization: `Bearer ${admin.key}` }, payload: { email: `c-${randomBytes(4).toString('hex')}@example.com`, display_name: 'C', role: 'viewer' } });
    const url = new URL(invited.json().url as string);
    expect(url.origin).toBe('https://sigil.example');

    const page = await t.app.inject({ method: 'GET', url: url.pathname + url.search });
    const [pre] = setCookies(page);
    expect(pre).toMatch(/^__Host-sigil_signin=[0-9a-f]{32}; Path=\/; Max-Age=3600; HttpOnly; SameSite=Strict; Secure$/);
    const csrf = /^__Host-sigil_signin=([0-9a-f]{32})/.exec(pre)![1];
    const form = (cookie: string) => ({ method: 'POST' as const, url: '/console/sign-in/link', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams({ csrf, token: url.searchParams.get('token')! }).toString() });

    // The sign-in form's token under the plain name is not read over HTTPS: the form expired.
    expect((await t.app.inject(form(`sigil_signin=${csrf}`))).statusCode).toBe(403);
    const signedIn = await t.app.inject(form(`__Host-sigil_signin=${csrf}`));
    expect(signedIn.statusCode).toBe(303);
    const session = setCookies(signedIn).find((c) => c.startsWith('__Host-sigil_session='))!;
    expect(session).toMatch(/^__Host-sigil_session=sgs_[0-9a-f]{64}; Path=\/; Max-Age=43200; HttpOnly; SameSite=Strict; Secure$/);
    expect(session).not.toMatch(/Domain=/i);
    const token = /^__Host-sigil_session=(sgs_[0-9a-f]{64})/.exec(session)![1];

    expect((await t.app.inject({ method: 'GET', url: '/console/account', headers: { cookie: `__Host-sigil_session=${token}` } })).statusCode).toBe(200);
    // The same session under the plain name (as a sibling subdomain could set it) signs nobody in.
    expect(await t.app.inject({ method: 'GET', url: '/console/account', headers: { cookie: `sigil_session=${token}` } })).toMatchObject({ statusCode: 303, headers: { location: '/console/sign-in' } });
  });
});
