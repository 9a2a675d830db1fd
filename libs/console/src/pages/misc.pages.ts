import type { ConsoleViewer } from '../people/console-auth';
import { esc, hidden, page } from './layout';

export function errorPage(status: number, title: string, message: string, viewer: ConsoleViewer | null): string {
  const back = viewer ? '<p><a href="/console/approvals">Back to the console</a></p>' : '<p><a href="/console/sign-in">Sign in</a></p>';
  return page(title, `<p class="flash error" role="alert" id="error" data-status="${status}">${esc(message)}</p>${back}`, { viewer });
}

export function accountPage(viewer: ConsoleViewer, flash: { kind: 'ok' | 'error'; text: string } | null, hasPassword: boolean): string {
  const u = viewer.user;
  return page(
    'Account',
    `<dl class="facts"><dt>Name</dt><dd>${esc(u.display_name)}</dd><dt>Email</dt><dd>${esc(u.email)}</dd><dt>Role</dt><dd>${esc(u.role)}</dd><dt>Scopes</dt><dd>${esc(viewer.scopes.join(', '))}</dd></dl>
<form method="post" action="/console/account/password" class="card">
${hidden('csrf', viewer.csrf)}
<h2>${hasPassword ? 'Change your password' : 'Set a password'}</h2>
${hasPassword ? '<label for="current-password">Current password</label>\n<input id="current-password" name="current_password" type="password" autocomplete="current-password" required maxlength="256">\n' : ''}<label for="password">New password (12 to 256 characters)</label>
<input id="password" name="password" type="password" autocomplete="new-password" required minlength="12" maxlength="256">
<p>Saving it ends your other sessions (this one stays).</p>
<p><button type="submit">Save password</button></p>
</form>`,
    { viewer, flash },
  );
}
