import { randomBytes } from 'node:crypto';
import { CommandBus } from '@nestjs/cqrs';
import { AccessService } from '@app/access';
import { SetPasswordCommand } from '@app/console';
import { consoleClient } from './support/console-client';
import { startTestApp, TestApp } from './support/test-app';

/**
 * An email address is one user per organization: inviting an address another organization has is
 * no 409 (no answer depends on another organization's people), and signing in with a password opens
 * the account, of those the address is, whose password matches (both modes).
 */
describe('console: email addresses per organization (e2e)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMITS: 'off' });
  }, 60_000);
  afterAll(async () => {
    await t?.close();
  });

  it('one address in two organizations: two users; each password opens its own organization', async () => {
    const access = t.app.get(AccessService);
    const scopes = ['users:manage', 'payments:read', 'receipts:read', 'approvals:manage'] as const;
    const orgs = await Promise.all([0, 1].map(async () => {
      const o = await access.createOrganization(`per-org-${randomBytes(3).toString('hex')}`);
      return { orgId: o.org_id, key: (await access.createApiKey(o.org_id, { scopes: [...scopes], mode: 'test' })).key };
    }));
    const email = `both-${randomBytes(4).toString('hex')}@example.com`;
    const invite = (key: string, address = email) => t.app.inject({ method: 'POST', url: '/api/users', headers: { authorization: `Bearer ${key}` }, payload: { email: address, display_name: 'Both', role: 'viewer' } });
    const first = await invite(orgs[0].key);
    expect(first.statusCode).toBe(201);
    const second = await invite(orgs[1].key, email.toUpperCase());
    expect(second.statusCode).toBe(201);
    expect(second.json().user).toMatchObject({ org_id: orgs[1].orgId, email });
    expect(second.json().user.user_id).not.toBe(first.json().user.user_id);
    // Within one organization an address is still one user.
    expect((await invite(orgs[1].key)).json()).toMatchObject({ error: 'email_taken' });

    const bus = t.app.get(CommandBus);
    await bus.execute(new SetPasswordCommand(orgs[0].orgId, first.json().user.user_id, 'the first organization'));
    await bus.execute(new SetPasswordCommand(orgs[1].orgId, second.json().user.user_id, 'the second organization'));
    const signIn = async (password: string) => {
      const b = consoleClient(t.app);
      const form = await b.send('GET', '/console/sign-in');
      const res = await b.send('POST', '/console/sign-in', { csrf: b.csrf(form.body), email, password });
      return { res, b };
    };
    for (const [password, org] of [['the first organization', orgs[0]], ['the second organization', orgs[1]]] as const) {
      const { res, b } = await signIn(password);
      expect(res.status).toBe(303);
      const sessions = (await t.app.inject({ method: 'GET', url: '/api/sessions', headers: { authorization: `Bearer ${org.key}` } })).json().sessions as { status: string }[];
      expect(sessions.filter((s) => s.status === 'active')).toHaveLength(1);
      expect((await b.send('GET', '/console/account')).status).toBe(200);
    }
    expect((await signIn('neither of the two')).res.status).toBe(401);
  });
});
