import { randomBytes } from 'node:crypto';
import { CommandBus } from '@nestjs/cqrs';
import { AccessService } from '@app/access';
import { InviteUserCommand, IssuedSignInLink, IssueSignInLinkCommand } from '@app/console';
import { consoleClient, signInByLink } from './support/console-client';
import { startTestApp, TestApp } from './support/test-app';

/**
 * Removing people and changing passwords over HTTP (both modes): POST /api/users/{id}/deactivate
 * and the people page's Deactivate (CSRF), after which the person's sessions and sign-ins are
 * refused; the account page asks for the current password and ends the person's other sessions.
 */
describe('console: deactivating people, changing passwords (e2e)', () => {
  let t: TestApp;
  let access: AccessService;

  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMITS: 'off' });
    access = t.app.get(AccessService);
  }, 60_000);
  afterAll(async () => {
    await t?.close();
  });

  const api = async (method: 'GET' | 'POST', url: string, key: string) => {
    const res = await t.app.inject({ method, url, headers: { authorization: `Bearer ${key}` } });
    return { status: res.statusCode, body: res.json() as Record<string, unknown> };
  };
  const org = async () => {
    const o = await access.createOrganization(`deact-${randomBytes(3).toString('hex')}`);
    const admin = await access.createApiKey(o.org_id, { scopes: ['users:manage', 'payments:read', 'receipts:read', 'approvals:manage', 'keys:manage', 'payments:write', 'certificates:write', 'webhooks:manage'], mode: 'test' });
    return { orgId: o.org_id, admin: admin.key };
  };
  const person = (orgId: string, role: string) =>
    t.app.get(CommandBus).execute<InviteUserCommand, IssuedSignInLink>(new InviteUserCommand(orgId, { email: `${role}-${randomBytes(4).toString('hex')}@example.com`, displayName: `${role} person`, role }, { kind: 'operator' }));
  const linkOf = (issued: IssuedSignInLink) => `${t.config.BASE_URL}/console/sign-in/link?token=${issued.token}`;

  it('a key deactivates a person: their open session is refused at once, and they sign in no more; bad ids 400, another organization 404, owners 403', async () => {
    const a = await org();
    const b = await org();
    const viewer = await person(a.orgId, 'viewer');
    const browser = await signInByLink(t.app, linkOf(viewer));
    expect((await browser.send('GET', '/console/account')).status).toBe(200);

    expect(await api('POST', `/api/users/${viewer.user.user_id}/deactivate`, b.admin)).toMatchObject({ status: 404, body: { error: 'not_found' } });
    expect(await api('POST', '/api/users/usr_nope/deactivate', a.admin)).toMatchObject({ status: 400, body: { error: 'validation_failed' } });
    const done = await api('POST', `/api/users/${viewer.user.user_id}/deactivate`, a.admin);
    expect(done).toMatchObject({ status: 200, body: { user_id: viewer.user.user_id, deactivated_at: expect.any(String) } });
    expect(await api('POST', `/api/users/${viewer.user.user_id}/deactivate`, a.admin)).toMatchObject({ status: 200, body: { deactivated_at: done.body.deactivated_at } });

    expect(await browser.send('GET', '/console/account')).toMatchObject({ status: 303, headers: { location: '/console/sign-in' } });
    const sessions = (await api('GET', `/api/sessions?user_id=${viewer.user.user_id}`, a.admin)).body.sessions as { status: string }[];
    expect(sessions.map((s) => s.status)).toEqual(['revoked']);
    // A link issued before (or after) opens nothing.
    const fresh = await t.app.get(CommandBus).execute(new IssueSignInLinkCommand(a.orgId, viewer.user.user_id, { kind: 'operator' }));
    const c = consoleClient(t.app);
    const page = await c.send('GET', '/console/sign-in');
    expect((await c.send('POST', '/console/sign-in/link', { csrf: c.csrf(page.body), token: (fresh as IssuedSignInLink).token })).status).toBe(401);

    const owner = await person(a.orgId, 'owner');
    expect(await api('POST', `/api/users/${owner.user.user_id}/deactivate`, a.admin)).toMatchObject({ status: 403, body: { error: 'owner_role_required' } });
  });

  it('the people page deactivates with its CSRF token; not oneself; an admin not an owner', async () => {
    const a = await org();
    const owner = await person(a.orgId, 'owner');
    const admin = await person(a.orgId, 'admin');
    const reviewer = await person(a.orgId, 'reviewer');
    const asAdmin = await signInByLink(t.app, linkOf(admin));
    const asReviewer = await signInByLink(t.app, linkOf(reviewer));
    const page = await asAdmin.send('GET', '/console/people');
    expect(page.body).toContain(`action="/console/people/${reviewer.user.user_id}/deactivate"`);
    expect(page.body).not.toContain(`action="/console/people/${admin.user.user_id}/deactivate"`);
    expect(page.body).not.toContain(`action="/console/people/${owner.user.user_id}/deactivate"`);
    const csrf = asAdmin.csrf(page.body);

    expect((await asAdmin.send('POST', `/console/people/${reviewer.user.user_id}/deactivate`, {})).status).toBe(403);
    expect((await asAdmin.send('POST', `/console/people/${admin.user.user_id}/deactivate`, { csrf })).status).toBe(403);
    expect((await asAdmin.send('POST', `/console/people/${owner.user.user_id}/deactivate`, { csrf })).status).toBe(403);
    expect((await asAdmin.send('POST', '/console/people/usr_nope/deactivate', { csrf })).status).toBe(404);
    expect(await asAdmin.send('POST', `/console/people/${reviewer.user.user_id}/deactivate`, { csrf })).toMatchObject({ status: 303, headers: { location: '/console/people?done=deactivated' } });
    const after = await asAdmin.send('GET', '/console/people?done=deactivated');
    expect(after.body).toContain('The person is deactivated');
    expect(after.body).toMatch(new RegExp(`data-user-id="${reviewer.user.user_id}"[\\s\\S]*?deactivated 20`));
    expect((await asReviewer.send('GET', '/console/approvals')).status).toBe(303);
    // A reviewer cannot manage people at all.
    const r2 = await signInByLink(t.app, linkOf(await person(a.orgId, 'reviewer')));
    expect((await r2.send('POST', `/console/people/${admin.user.user_id}/deactivate`, { csrf: 'x' })).status).toBe(403);
  });

  it('the account page asks for the current password once one is set, and a change ends the other sessions', async () => {
    const a = await org();
    const viewer = await person(a.orgId, 'viewer');
    const here = await signInByLink(t.app, linkOf(viewer));
    const account = await here.send('GET', '/console/account');
    expect(account.body).not.toContain('name="current_password"');
    const csrf = here.csrf(account.body);
    expect((await here.send('POST', '/console/account/password', { csrf, password: 'the first password' })).status).toBe(303);

    const elsewhere = consoleClient(t.app);
    const form = await elsewhere.send('GET', '/console/sign-in');
    expect((await elsewhere.send('POST', '/console/sign-in', { csrf: elsewhere.csrf(form.body), email: viewer.user.email, password: 'the first password' })).status).toBe(303);
    expect((await elsewhere.send('GET', '/console/account')).status).toBe(200);

    expect((await here.send('GET', '/console/account')).body).toContain('name="current_password"');
    const wrong = await here.send('POST', '/console/account/password', { csrf, password: 'the second password', current_password: 'a wrong guess' });
    expect(wrong.status).toBe(400);
    expect(wrong.body).toContain('the current password is not right');
    expect((await here.send('POST', '/console/account/password', { csrf, password: 'the second password' })).status).toBe(400);
    expect((await here.send('POST', '/console/account/password', { csrf, password: 'the second password', current_password: 'the first password' })).status).toBe(303);

    expect((await here.send('GET', '/console/account')).status).toBe(200);
    expect(await elsewhere.send('GET', '/console/account')).toMatchObject({ status: 303, headers: { location: '/console/sign-in' } });
  });

  it('a password change ends every other session of the person, however many: not only the newest 200 (the people listing\u2019s bound)', async () => {
    const a = await org();
    const viewer = await person(a.orgId, 'viewer');
    const oldest = await signInByLink(t.app, linkOf(viewer));
    const newLink = async () => linkOf(await t.app.get(CommandBus).execute<IssueSignInLinkCommand, IssuedSignInLink>(new IssueSignInLinkCommand(a.orgId, viewer.user.user_id, { kind: 'operator' })));
    for (let i = 0; i < 200; i++) await signInByLink(t.app, await newLink());
    const newest = await signInByLink(t.app, await newLink());
    expect((await oldest.send('GET', '/console/account')).status).toBe(200);

    const csrf = newest.csrf((await newest.send('GET', '/console/account')).body);
    expect((await newest.send('POST', '/console/account/password', { csrf, password: 'a brand new password' })).status).toBe(303);
    expect((await newest.send('GET', '/console/account')).status).toBe(200);
    expect(await oldest.send('GET', '/console/account')).toMatchObject({ status: 303, headers: { location: '/console/sign-in' } });
  }, 120_000);
});
