import { esc, hidden, page } from './layout';

/** Sign in with a password; links come from an owner or admin (or the first start's log). */
export function signInPage(csrf: string, options: { error?: string; email?: string } = {}): string {
  return page(
    'Sign in',
    `<form method="post" action="/console/sign-in" class="card">
${hidden('csrf', csrf)}
<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="username" required maxlength="254" value="${esc(options.email ?? '')}">
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required maxlength="256">
<p><button type="submit">Sign in</button></p>
</form>
<p>No password yet? Open the one-time sign-in link an owner or admin gave you (the first owner's is printed when the server first starts, and by <code>npm run cli -- users:invite</code>), then set a password on your account page.</p>`,
    { flash: options.error ? { kind: 'error', text: options.error } : null },
  );
}

/** A link opens this page; the button (a POST) uses it up, so a mail scanner fetching the link signs nobody in. */
export function signInLinkPage(token: string, csrf: string, error?: string): string {
  return page(
    'Sign in with a link',
    `<form method="post" action="/console/sign-in/link" class="card">
${hidden('csrf', csrf)}${hidden('token', token)}
<p>This one-time link signs you in to the console. It works once.</p>
<p><button type="submit" id="use-link">Sign in</button></p>
</form>
<p><a href="/console/sign-in">Sign in with a password instead</a></p>`,
    { flash: error ? { kind: 'error', text: error } : null },
  );
}
