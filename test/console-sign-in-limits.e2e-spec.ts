import { randomBytes } from 'node:crypto';
import { AccessService, SCOPES } from '@app/access';
import { InviteUserCommand, IssuedSignInLink, SetPasswordCommand } from '@app/console';
import { signInByLink } from './support/console-client';
import { CommandBus } from '@nestjs/cqrs';
import { startTestApp, TestApp } from './support/test-app';

/** Password guessing is throttled before any password is checked: 10 failed attempts per address per 15 minutes (both modes; rate limits on); successes do not count. */
describe('console sign-in limits (e2e)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  }, 60_000);
  afterAll(async () => {
    await t?.close();
  });

  it('the 11th attempt for one address is 429 with Retry-After, even with the right password; another address is unaffected', async () => {
    const access = t.app.get(AccessService);
    const org = await access.createOrganization(`limits-${randomBytes(3).toString('hex')}`);
    const admin = await access.createApiKey(org.org_id, { scopes: [...SCOPES], mode: 'test' });
    const email = `guess-${randomBytes(4).toString('hex')}@example.com`;
    const invited = await t.app.inject({ method: 'POST', url: '/api/users', headers: { authorization: `Bearer ${admin.key}` }, payload: { email, display_name: 'Guessed', role: 'viewer' } });
    await t.app.get(CommandBus).execute(new SetPasswordCommand(org.org_id, invited.json().user.user_id, 'the right password'));

    const csrf = randomBytes(16).toString('hex');
    const attempt = (address: string, password: string) =>
      t.app.inject({
        method: 'POST',
        url: '/console/sign-in',
        remoteAddress: `10.9.${randomBytes(1)[0]}.${randomBytes(1)[0]}`,
        headers: { cookie: `sigil_signin=${csrf}`, 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ csrf, email: address, password }).toString(),
      });
    for (let i = 0; i < 10; i++) expect((await attempt(email, `wrong ${i}`)).statusCode).toBe(401);
    const refused = await attempt(email, 'the right password');
    expect(refused.statusCode).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(refused.body).toContain('Too many sign-in attempts');
    expect((await attempt(`other-${email}`, 'whatever it is')).statusCode).toBe(401);
  }, 60_000);

  it('the account page\u2019s current password is limited like sign-in: 10 wrong guesses, then 429', async () => {
    const access = t.app.get(AccessService);
    const org = await access.createOrganization(`limits-${randomBytes(3).toString('hex')}`);
    const bus = t.app.get(CommandBus);
    const invited = await bus.execute<InviteUserCommand, IssuedSignInLink>(new InviteUserCommand(org.org_id, { email: `acct-${randomBytes(4).toString('hex')}@example.com`, displayName: 'Acct', role: 'viewer' }, { kind: 'operator' }));
    await bus.execute(new SetPasswordCommand(org.org_id, invited.user.user_id, 'the right password'));
    const b = await signInByLink(t.app, `${t.config.BASE_URL}/console/sign-in/link?token=${invited.token}`);
    const csrf = b.csrf((await b.send('GET', '/console/account')).body);
    for (let i = 0; i < 10; i++) expect((await b.send('POST', '/console/account/password', { csrf, password: 'a brand new password', current_password: `guess ${i}` })).status).toBe(400);
    expect((await b.send('POST', '/console/account/password', { csrf, password: 'a brand new password', current_password: 'the right password' })).status).toBe(429);
  }, 60_000);

  it('successful sign-ins do not count against the address: 12 in a row all open a session', async () => {
    const access = t.app.get(AccessService);
    const org = await access.createOrganization(`limits-${randomBytes(3).toString('hex')}`);
    const admin = await access.createApiKey(org.org_id, { scopes: [...SCOPES], mode: 'test' });
    const email = `often-${randomBytes(4).toString('hex')}@example.com`;
    const invited = await t.app.inject({ method: 'POST', url: '/api/users', headers: { authorization: `Bearer ${admin.key}` }, payload: { email, display_name: 'Often', role: 'viewer' } });
    await t.app.get(CommandBus).execute(new SetPasswordCommand(org.org_id, invited.json().user.user_id, 'the right password'));
    const csrf = randomBytes(16).toString('hex');
    for (let i = 0; i < 12; i++) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/console/sign-in',
        remoteAddress: `10.8.${randomBytes(1)[0]}.${randomBytes(1)[0]}`,
        headers: { cookie: `sigil_signin=${csrf}`, 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ csrf, email, password: 'the right password' }).toString(),
      });
      expect(res.statusCode).toBe(303);
    }
  }, 60_000);
});
