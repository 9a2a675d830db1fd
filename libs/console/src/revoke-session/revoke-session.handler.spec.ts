import { consoleHandlers } from '../people/console-handlers.fixture';
import { RedeemSignInLinkCommand } from '../redeem-sign-in-link/redeem-sign-in-link.command';
import { RevokeSessionCommand } from './revoke-session.command';

describe('RevokeSessionHandler', () => {
  it('ends a session once; another organization\u2019s is not found', async () => {
    const w = consoleHandlers();
    const { session } = await w.redeem.execute(new RedeemSignInLinkCommand((await w.inviteOne('a@example.com')).token));
    await expect(w.revoke.execute(new RevokeSessionCommand(session.session_id, { orgId: 'org_b', reason: 'revoked', by: 'api_key:key_1' }))).rejects.toMatchObject({ code: 'not_found' });
    expect(await w.revoke.execute(new RevokeSessionCommand(session.session_id, { orgId: 'org_a', reason: 'revoked', by: 'api_key:key_1' }))).toMatchObject({ status: 'revoked' });
    await w.revoke.execute(new RevokeSessionCommand(session.session_id, { reason: 'signed_out', by: 'user:x' }));
    expect((await w.store.readAll()).events.filter((e) => e.type === 'session.revoked')).toHaveLength(1);
  });
});
