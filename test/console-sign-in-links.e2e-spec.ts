import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { AccessService } from '@app/access';
import { createLogger } from '@app/http';
import { startTestApp, TestApp } from './support/test-app';

/**
 * Sign-in links for someone else reach only that person (the server log stands in for email): the
 * answer to POST /api/users/{id}/sign-in-links has no url, an owner's link needs an owner, and the
 * request log never records a token from /console/sign-in/link?token=… (both modes).
 */
describe('console sign-in links (e2e)', () => {
  let t: TestApp;
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });

  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMITS: 'off' }, [], { logger: createLogger('info', 'sigil', sink) });
  }, 60_000);
  afterAll(async () => {
    await t?.close();
  });

  const api = async (method: 'GET' | 'POST', url: string, key: string, payload?: object) => {
    const res = await t.app.inject({ method, url, payload, headers: { authorization: `Bearer ${key}` } });
    return { status: res.statusCode, body: res.json() as Record<string, unknown> & { url?: string; user: { user_id: string } } };
  };
  const signIn = async (token: string) => {
    const csrf = randomBytes(16).toString('hex');
    return t.app.inject({ method: 'POST', url: '/console/sign-in/link', headers: { cookie: `sigil_signin=${csrf}`, 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams({ csrf, token }).toString() });
  };

  it('a link issued by a key for a person is not in the answer: it is logged for the person, and works once for them', async () => {
    const access = t.app.get(AccessService);
    const org = await access.createOrganization(`links-${randomBytes(3).toString('hex')}`);
    const admin = await access.createApiKey(org.org_id, { scopes: ['users:manage', 'payments:read', 'receipts:read', 'approvals:manage'], mode: 'test' });
    const invited = await api('POST', '/api/users', admin.key, { email: `p-${randomBytes(4).toString('hex')}@example.com`, display_name: 'P', role: 'viewer' });
    // The first link of a new account goes to its inviter, in the answer.
    expect(invited).toMatchObject({ status: 201, body: { delivered_to: 'issuer', url: expect.stringMatching(/token=sgl_/) } });
    const userId = invited.body.user.user_id;

    const issued = await api('POST', `/api/users/${userId}/sign-in-links`, admin.key);
    expect(issued).toMatchObject({ status: 201, body: { delivered_to: 'user', link_id: expect.stringMatching(/^lnk_/), user: { user_id: userId } } });
    expect(issued.body).not.toHaveProperty('url');
    expect(JSON.stringify(issued.body)).not.toMatch(/sgl_/);
    const logged = lines.find((l) => l.event === 'console.sign_in_link' && l.link_id === issued.body.link_id && typeof l.url === 'string');
    expect(logged).toMatchObject({ delivered_to: 'user', user_id: userId, url: expect.stringMatching(/\/console\/sign-in\/link\?token=sgl_[0-9a-f]{64}$/) });
    // The invite's own link is not in the log.
    const inviteToken = new URL(invited.body.url!).searchParams.get('token')!;
    expect(JSON.stringify(lines)).not.toContain(inviteToken);

    const token = new URL(logged!.url as string).searchParams.get('token')!;
    expect((await signIn(token)).statusCode).toBe(303);
    expect((await signIn(token)).statusCode).toBe(401);
  });

  it('an owner\u2019s link is refused to a key (403 owner_role_required); another organization\u2019s user is 404', async () => {
    const access = t.app.get(AccessService);
    const org = await access.createOrganization(`links-${randomBytes(3).toString('hex')}`);
    const other = await access.createOrganization(`links-${randomBytes(3).toString('hex')}`);
    const admin = await access.createApiKey(org.org_id, { scopes: ['users:manage'], mode: 'test' });
    const otherAdmin = await access.createApiKey(other.org_id, { scopes: ['users:manage'], mode: 'test' });
    const { InviteUserCommand } = await import('@app/console');
    const { CommandBus } = await import('@nestjs/cqrs');
    const owner = await t.app.get(CommandBus).execute(new InviteUserCommand(org.org_id, { email: `o-${randomBytes(4).toString('hex')}@example.com`, displayName: 'O', role: 'owner' }, { kind: 'operator' }));
    const ownerId = (owner as { user: { user_id: string } }).user.user_id;
    expect(await api('POST', `/api/users/${ownerId}/sign-in-links`, admin.key)).toMatchObject({ status: 403, body: { error: 'owner_role_required' } });
    expect(await api('POST', `/api/users/${ownerId}/sign-in-links`, otherAdmin.key)).toMatchObject({ status: 404, body: { error: 'not_found' } });
    expect(await api('POST', '/api/users/usr_nope/sign-in-links', admin.key)).toMatchObject({ status: 400, body: { error: 'validation_failed' } });
  });

  it('the request log records /console/sign-in/link without its token', async () => {
    const token = `sgl_${randomBytes(32).toString('hex')}`;
    const res = await t.app.inject({ method: 'GET', url: `/console/sign-in/link?token=${token}` });
    expect(res.statusCode).toBe(200);
    const requestLines = lines.filter((l) => typeof (l.req as { url?: string } | undefined)?.url === 'string' && (l.req as { url: string }).url.startsWith('/console/sign-in/link?'));
    expect(requestLines.length).toBeGreaterThan(0);
    expect(requestLines[0].req).toMatchObject({ method: 'GET', url: '/console/sign-in/link?token=[redacted]' });
    expect(JSON.stringify(lines)).not.toContain(token);
  });
});
