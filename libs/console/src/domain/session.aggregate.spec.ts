import { csrfTokenFor, hashPassword, hashToken, newLinkToken, newSessionToken, passwordMatches, sameSecret } from './secrets';
import type { UserActor } from './user.aggregate';
import { foldSession, foldSignInLink, issueSignInLink, redeemSignInLink, revokeSession, SESSION_REVOKED, startSession } from './session.aggregate';

const now = new Date('2026-11-25T12:00:00Z');

describe('sessions and sign-in links', () => {
  it('a session expires after its time and ends once', () => {
    const started = startSession({ sessionId: 'ses_1', orgId: 'org_a', userId: 'usr_1', tokenHash: 'h', method: 'link' }, now, 3600_000);
    expect(started[0].data).toMatchObject({ token_hash: 'h', expires_at: '2026-11-25T13:00:00.000Z' });
    const s = foldSession(started)!;
    const revoked = revokeSession(s, 'signed_out', 'user:usr_1');
    expect(revoked).toEqual([{ type: SESSION_REVOKED, data: { session_id: 'ses_1', org_id: 'org_a', user_id: 'usr_1', reason: 'signed_out', revoked_by: 'user:usr_1' } }]);
    expect(revokeSession(foldSession([...started, ...revoked])!, 'revoked', 'x')).toEqual([]);
  });

  it('a link works once and in time; a used, expired or missing one is refused alike', () => {
    const issued = issueSignInLink({ linkId: 'lnk_1', orgId: 'org_a', user: { user_id: 'usr_1', role: 'viewer' }, tokenHash: 'h' }, { kind: 'operator' }, now, 60_000);
    const link = foldSignInLink(issued)!;
    const redeemed = redeemSignInLink(link, 'ses_1', new Date(now.getTime() + 59_000));
    expect(redeemed[0].data).toEqual({ link_id: 'lnk_1', org_id: 'org_a', user_id: 'usr_1', session_id: 'ses_1' });
    const used = foldSignInLink([...issued, ...redeemed]);
    for (const [state, at] of [[used, now], [link, new Date(now.getTime() + 60_000)], [null, now]] as const) {
      expect(() => redeemSignInLink(state, 'ses_2', at)).toThrow(expect.objectContaining({ code: 'sign_in_failed' }));
    }
  });
});

describe('who may issue a sign-in link, and who receives it', () => {
  const base = { linkId: 'lnk_1', orgId: 'org_a', tokenHash: 'h' };
  const owner = { user_id: 'usr_owner', role: 'owner' as const };
  const viewer = { user_id: 'usr_viewer', role: 'viewer' as const };
  // Written as a cast so the spec holds whether or not a key actor carries its scopes.
  const key = { kind: 'api_key', keyId: 'key_1', scopes: [] } as unknown as UserActor;
  const delivered = (events: ReturnType<typeof issueSignInLink>) => events[0].data.delivered_to;
  it('an owner\u2019s link only by an owner or the operator', () => {
    for (const by of [key, { kind: 'user', userId: 'usr_admin', role: 'admin' } as const]) {
      expect(() => issueSignInLink({ ...base, user: owner }, by, now)).toThrow(expect.objectContaining({ code: 'owner_role_required' }));
    }
    expect(issueSignInLink({ ...base, user: owner }, { kind: 'user', userId: 'usr_other', role: 'owner' }, now)[0].data).toMatchObject({ issued_by: 'user:usr_other', delivered_to: 'user' });
    expect(delivered(issueSignInLink({ ...base, user: owner }, { kind: 'operator' }, now))).toBe('issuer');
  });
  it('a link for someone else goes to them, never to the issuer; one\u2019s own, the operator\u2019s and a new account\u2019s first go to the issuer', () => {
    expect(delivered(issueSignInLink({ ...base, user: viewer }, key, now))).toBe('user');
    expect(delivered(issueSignInLink({ ...base, user: viewer }, { kind: 'user', userId: 'usr_admin', role: 'admin' }, now))).toBe('user');
    expect(delivered(issueSignInLink({ ...base, user: viewer }, { kind: 'user', userId: 'usr_viewer', role: 'viewer' }, now))).toBe('issuer');
    expect(delivered(issueSignInLink({ ...base, user: viewer, newAccount: true }, key, now))).toBe('issuer');
  });
});

describe('console secrets', () => {
  it('tokens are 256 random bits with a prefix; only their SHA-256 is kept', () => {
    expect(newSessionToken()).toMatch(/^sgs_[0-9a-f]{64}$/);
    expect(newLinkToken()).toMatch(/^sgl_[0-9a-f]{64}$/);
    expect(newSessionToken()).not.toBe(newSessionToken());
    expect(hashToken('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('the CSRF token is bound to the session', () => {
    const a = newSessionToken();
    expect(csrfTokenFor(a)).toBe(csrfTokenFor(a));
    expect(csrfTokenFor(a)).not.toBe(csrfTokenFor(newSessionToken()));
    expect(sameSecret(csrfTokenFor(a), csrfTokenFor(a))).toBe(true);
    expect(sameSecret('short', csrfTokenFor(a))).toBe(false);
  });

  it('passwords: scrypt with a salt, checked in constant time; no stored hash matches nothing', async () => {
    const stored = await hashPassword('correct horse battery staple');
    expect(stored).toMatch(/^scrypt\$32768\$8\$1\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/);
    expect(await hashPassword('correct horse battery staple')).not.toBe(stored);
    expect(await passwordMatches('correct horse battery staple', stored)).toBe(true);
    expect(await passwordMatches('correct horse battery stapl', stored)).toBe(false);
    expect(await passwordMatches('anything', null)).toBe(false);
    expect(await passwordMatches('x', 'md5$abc')).toBe(false);
  });
  it('scrypt runs off the event loop: timers fire while several passwords are checked', async () => {
    const stored = await hashPassword('correct horse battery staple');
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    const checks = Promise.all(Array.from({ length: 6 }, () => passwordMatches('a wrong password guess', stored)));
    await new Promise((resolve) => setTimeout(resolve, 30));
    const during = ticks;
    expect(await checks).toEqual([false, false, false, false, false, false]);
    clearInterval(timer);
    expect(during).toBeGreaterThan(3);
  });
});
