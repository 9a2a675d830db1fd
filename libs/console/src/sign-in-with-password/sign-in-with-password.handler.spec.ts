import { consoleHandlers } from '../people/console-handlers.fixture';
import { SetPasswordCommand } from '../set-password/set-password.command';
import { SignInWithPasswordCommand } from './sign-in-with-password.command';

describe('SetPasswordHandler and SignInWithPasswordHandler', () => {
  it('a password set by its user signs them in; wrong, unknown and password-less answer the same', async () => {
    const w = consoleHandlers();
    const a = (await w.inviteOne('a@example.com')).user;
    await w.inviteOne('nopass@example.com');
    await expect(w.setPassword.execute(new SetPasswordCommand('org_a', a.user_id, 'too short'))).rejects.toMatchObject({ code: 'validation_failed' });
    await expect(w.setPassword.execute(new SetPasswordCommand('org_b', a.user_id, 'long enough password'))).rejects.toMatchObject({ code: 'not_found' });
    expect(await w.setPassword.execute(new SetPasswordCommand('org_a', a.user_id, 'long enough password'))).toMatchObject({ has_password: true });
    expect(JSON.stringify((await w.store.readAll()).events)).not.toContain('long enough password');

    expect(await w.signIn.execute(new SignInWithPasswordCommand(' A@example.com ', 'long enough password'))).toMatchObject({ session: { method: 'password' }, user: { user_id: a.user_id } });
    for (const [email, password] of [['a@example.com', 'long enough passwor'], ['who@example.com', 'long enough password'], ['nopass@example.com', ''], ['', '']]) {
      await expect(w.signIn.execute(new SignInWithPasswordCommand(email, password))).rejects.toMatchObject({ code: 'sign_in_failed', message: 'Wrong email or password' });
    }
  });
});
