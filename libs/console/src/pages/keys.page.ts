import { SCOPES } from '@app/access';
import type { ConsoleViewer } from '../people/console-auth';
import { esc, hidden, page } from './layout';

export interface KeyListItem {
  key_id: string;
  mode: string;
  scopes: readonly string[];
  name: string | null;
  owner: string | null;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  status: string;
}

/** The form field of a scope's checkbox: one name each (the console's form parser keeps a field's first value). */
export const scopeField = (scope: string) => `scope_${scope.replace(':', '_')}`;

/** A key just made: its secret, shown on this page only. */
export interface NewKey {
  key_id: string;
  key: string;
}

/** The authority's signing keys, as published (public parts and status). */
export interface SigningKeyItem {
  key_id: string;
  status: string;
  created_at: string;
  retired_at: string | null;
  revoked_at: string | null;
}

function signingKeysSection(keys: SigningKeyItem[]): string {
  const rows = keys
    .map((k) => `<tr data-signing-key-id="${esc(k.key_id)}"><td><code>${esc(k.key_id)}</code></td><td class="status">${esc(k.status)}</td><td>${esc(k.created_at)}</td><td>${esc(k.retired_at ?? '')}</td><td>${esc(k.revoked_at ?? '')}</td></tr>`)
    .join('\n');
  return `<h2>Signing keys</h2>
<p>The keys this service signs certificates, decisions, reviews and receipts with (published at <a href="/.well-known/signing-keys.json">/.well-known/signing-keys.json</a>). Rotating or revoking one is an operator's task: <code>npm run cli -- signing-keys rotate</code>.</p>
<div class="table-wrap"><table id="signing-keys"><thead><tr><th scope="col">Key</th><th scope="col">Status</th><th scope="col">Created</th><th scope="col">Retired</th><th scope="col">Revoked</th></tr></thead><tbody>${rows}</tbody></table></div>`;
}

export function keysPage(viewer: ConsoleViewer, keys: KeyListItem[], options: { created?: NewKey | null; flash?: { kind: 'ok' | 'error'; text: string } | null; signingKeys?: SigningKeyItem[] } = {}): string {
  const created = options.created
    ? `<section class="card" id="new-key" aria-labelledby="new-key-title"><h2 id="new-key-title">Key ${esc(options.created.key_id)} created</h2>
<p>Copy it now: it is shown this once (only its hash is stored).</p>
<p><code id="new-key-secret">${esc(options.created.key)}</code></p></section>`
    : '';
  const grantable = SCOPES.filter((s) => viewer.scopes.includes(s));
  const form = `<form method="post" action="/console/keys" class="card" aria-labelledby="create-title">
<h2 id="create-title">Create a key</h2>
${hidden('csrf', viewer.csrf)}
<label for="key-name">Name (optional)</label><input id="key-name" name="name" type="text" maxlength="200">
<label for="key-owner">Who holds it (optional)</label><input id="key-owner" name="owner" type="text" maxlength="200">
<label for="key-mode">Mode</label><select id="key-mode" name="mode"><option value="test">test (cdp_test_)</option><option value="live">live (cdp_live_)</option></select>
<fieldset><legend>Scopes (only those your role holds)</legend><ul class="checks">${grantable
    .map((s) => `<li><input type="checkbox" id="scope-${esc(s.replace(':', '-'))}" name="${esc(scopeField(s))}" value="on"><label class="inline" for="scope-${esc(s.replace(':', '-'))}">${esc(s)}</label></li>`)
    .join('')}</ul></fieldset>
<p><button type="submit">Create key</button></p>
</form>`;
  const rows = keys
    .map(
      (k) => `<tr data-key-id="${esc(k.key_id)}"><td><code>${esc(k.key_id)}</code></td><td>${esc(k.name ?? '')}</td><td>${esc(k.mode)}</td><td>${esc(k.scopes.join(', '))}</td><td>${esc(k.owner ?? '')}</td><td class="status">${esc(k.status)}</td><td>${
        k.status === 'active'
          ? `<form method="post" action="/console/keys/${esc(k.key_id)}/revoke" class="inline">${hidden('csrf', viewer.csrf)}<button type="submit" class="danger" aria-label="Revoke ${esc(k.key_id)}">Revoke</button></form>`
          : esc(k.revoked_at ?? k.expires_at ?? '')
      }</td></tr>`,
    )
    .join('\n');
  const table = `<div class="table-wrap"><table id="keys"><thead><tr><th scope="col">Key</th><th scope="col">Name</th><th scope="col">Mode</th><th scope="col">Scopes</th><th scope="col">Holder</th><th scope="col">Status</th><th scope="col"></th></tr></thead><tbody>${rows}</tbody></table></div>`;
  return page('API keys', created + form + table + signingKeysSection(options.signingKeys ?? []), { viewer, flash: options.flash ?? null });
}
