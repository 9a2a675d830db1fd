import { ROLES } from '../domain/roles';
import type { ConsoleViewer } from '../people/console-auth';
import type { SessionView, UserView } from '../people/console-queries';
import { esc, hidden, page } from './layout';

const roleOptions = (viewer: ConsoleViewer, selected: string) =>
  ROLES.filter((r) => r !== 'owner' || viewer.user.role === 'owner')
    .map((r) => `<option value="${r}"${r === selected ? ' selected' : ''}>${r}</option>`)
    .join('');

/** The organization's people (users:manage): invite (the link shown once), change roles, deactivate, and their sessions. */
export function peoplePage(viewer: ConsoleViewer, users: UserView[], sessions: SessionView[], options: { invited?: { url: string; email: string } | null; flash?: { kind: 'ok' | 'error'; text: string } | null } = {}): string {
  const invited = options.invited
    ? `<section class="card" id="invited"><h2>${esc(options.invited.email)} is invited</h2><p>Give them this one-time sign-in link (it works once, for 30 minutes; it is shown only here):</p><p><code id="invite-link">${esc(options.invited.url)}</code></p></section>`
    : '';
  const form = `<form method="post" action="/console/people" class="card" aria-labelledby="invite-title">
<h2 id="invite-title">Invite someone</h2>
${hidden('csrf', viewer.csrf)}
<label for="invite-email">Email</label><input id="invite-email" name="email" type="email" required maxlength="254">
<label for="invite-name">Display name</label><input id="invite-name" name="display_name" type="text" required maxlength="100">
<label for="invite-role">Role</label><select id="invite-role" name="role">${roleOptions(viewer, 'viewer')}</select>
<p><button type="submit">Invite</button></p>
</form>`;
  const names = new Map(users.map((u) => [u.user_id, u.display_name]));
  const rows = users
    .map((u) => {
      const canChange = !u.deactivated_at && u.user_id !== viewer.user.user_id && (u.role !== 'owner' || viewer.user.role === 'owner');
      const change = canChange
        ? `<form method="post" action="/console/people/${esc(u.user_id)}/role" class="inline">${hidden('csrf', viewer.csrf)}<label class="inline" for="role-${esc(u.user_id)}">Role of ${esc(u.display_name)}</label> <select id="role-${esc(u.user_id)}" name="role">${roleOptions(viewer, u.role)}</select> <button type="submit" class="secondary">Change</button></form>`
        : esc(u.role);
      const status = u.deactivated_at
        ? `deactivated ${esc(u.deactivated_at)}`
        : canChange
          ? `active <form method="post" action="/console/people/${esc(u.user_id)}/deactivate" class="inline">${hidden('csrf', viewer.csrf)}<button type="submit" class="danger" aria-label="Deactivate ${esc(u.display_name)}">Deactivate</button></form>`
          : 'active';
      return `<tr data-user-id="${esc(u.user_id)}"><td>${esc(u.display_name)}</td><td>${esc(u.email)}</td><td class="role">${change}</td><td>${u.has_password ? 'yes' : 'no'}</td><td class="status">${status}</td></tr>`;
    })
    .join('\n');
  const active = sessions.filter((s) => s.status === 'active');
  const sessionRows = active
    .map(
      (s) => `<tr data-session-id="${esc(s.session_id)}"><td>${esc(names.get(s.user_id) ?? s.user_id)}</td><td>${esc(s.method)}</td><td>${esc(s.created_at)}</td><td>${esc(s.expires_at)}</td><td>${
        s.session_id === viewer.session.session_id
          ? 'this session'
          : `<form method="post" action="/console/people/sessions/${esc(s.session_id)}/revoke" class="inline">${hidden('csrf', viewer.csrf)}<button type="submit" class="danger">Revoke</button></form>`
      }</td></tr>`,
    )
    .join('\n');
  return page(
    'People',
    `${invited}${form}
<div class="table-wrap"><table id="people"><thead><tr><th scope="col">Name</th><th scope="col">Email</th><th scope="col">Role</th><th scope="col">Password</th><th scope="col">Status</th></tr></thead><tbody>${rows}</tbody></table></div>
<h2>Signed-in sessions</h2>
<div class="table-wrap"><table id="sessions"><thead><tr><th scope="col">Person</th><th scope="col">By</th><th scope="col">Since</th><th scope="col">Until</th><th scope="col"></th></tr></thead><tbody>${sessionRows}</tbody></table></div>`,
    { viewer, flash: options.flash ?? null },
  );
}
