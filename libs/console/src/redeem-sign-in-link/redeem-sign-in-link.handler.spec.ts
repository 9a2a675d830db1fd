import { consoleHandlers } from '../people/console-handlers.fixture';
import { csrfTokenFor, hashToken } from '../domain/secrets';
import { RedeemSignInLinkCommand } from './redeem-sign-in-link.command';

describe('RedeemSignInLinkHandler', () => {
  it('starts a session (its token returned once, its hash stored) and uses the link up', async () => {
    const w = consoleHandlers();
    const { token, user } = await w.inviteOne('a@example.com');
    const signedIn = await w.redeem.execute(new RedeemSignInLinkCommand(token));
    expect(signedIn).toMatchObject({ session_token: expect.stringMatching(/^sgs_/), session: { user_id: user.user_id, method: 'link', status: 'active', expires_at: '2026-11-26T00:00:00.000Z' }, user: { email: 'a@example.com' } });
    expect(signedIn.csrf_token).toBe(csrfTokenFor(signedIn.session_token));
    expect(w.store.rows('console_sessions')).toEqual([expect.objectContaining({ token_hash: hashToken(signedIn.session_token) })]);
    expect(JSON.stringify((await w.store.readAll()).events)).not.toContain(signedIn.session_token);
    await expect(w.redeem.execute(new RedeemSignInLinkCommand(token))).rejects.toMatchObject({ code: 'sign_in_failed' });
  });

  it('two clicks at once open one session', async () => {
    const w = consoleHandlers();
    const { token } = await w.inviteOne('a@example.com');
    const results = await Promise.allSettled([w.redeem.execute(new RedeemSignInLinkCommand(token)), w.redeem.execute(new RedeemSignInLinkCommand(token))]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect(w.store.rows('console_sessions')).toHaveLength(1);
  });

  it('refuses an expired, malformed or unknown token alike', async () => {
    const w = consoleHandlers();
    const { token } = await w.inviteOne('a@example.com');
    w.clock.advance(30 * 60_000);
    for (const t of [token, 'nope', `sgl_${'0'.repeat(64)}`]) await expect(w.redeem.execute(new RedeemSignInLinkCommand(t))).rejects.toMatchObject({ code: 'sign_in_failed' });
    expect(w.store.rows('console_sessions')).toHaveLength(0);
  });
});
