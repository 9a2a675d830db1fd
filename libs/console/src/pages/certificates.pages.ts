import type { ConsoleViewer } from '../people/console-auth';
import { FieldMessages, FormProblem } from './field-messages';
import { esc, hidden, page } from './layout';

/** One of the organization's certificates as the registry lists it. */
export interface CertificateItem {
  id: string;
  title: string;
  artifact_type: string;
  certificate_id: string | null;
  artifact_hash: string | null;
  visibility: string;
  created_at: string;
}

/** A certificate just issued (the API's IssuanceResponse, less what the page does not show). */
export interface Issued {
  certificate_id: string;
  dataset_hash: string;
  issued_at: string;
  signing_key_id: string;
}

export const ARTIFACT_CHOICES = ['output', 'dataset', 'model', 'system'] as const;
export const MAX_CONTENT_CHARS_TEXT = '5,000,000';

type Flash = { kind: 'ok' | 'error'; text: string } | null;

const verifyLink = (id: string) => `<a href="/verify/${esc(id)}" class="verify-link">Open the public verify page</a>`;

const publishForm = (viewer: ConsoleViewer, id: string) =>
  `<form method="post" action="/console/certificates/${esc(id)}/publish" class="inline">${hidden('csrf', viewer.csrf)}<button type="submit" class="secondary" aria-label="Publish ${esc(id)} to the registry">Publish to the registry</button></form>`;

export function certificatesPage(
  viewer: ConsoleViewer,
  list: { items: CertificateItem[]; next_cursor: string | null },
  options: { flash?: Flash; problem?: FormProblem | null; draft?: { content: string; artifact_type: string; visibility: string } } = {},
): string {
  const canIssue = viewer.scopes.includes('certificates:write');
  const m = new FieldMessages(options.problem ?? null, { content: 'cert-content', file: 'cert-file', artifact_type: 'cert-type', visibility: 'cert-visibility', '': 'cert-file' });
  const d = options.draft ?? { content: '', artifact_type: 'output', visibility: 'private' };
  const rows = list.items
    .map((c) => {
      const id = c.certificate_id ?? c.id;
      return `<tr data-certificate-id="${esc(id)}"><td>${esc(c.title)}<br><code>${esc(id)}</code></td><td>${esc(c.artifact_type)}</td><td class="hash">${esc(c.artifact_hash ?? '')}</td><td class="visibility">${esc(c.visibility)}</td><td>${esc(c.created_at)}</td><td>${verifyLink(id)}${c.visibility === 'private' && canIssue ? ` ${publishForm(viewer, id)}` : ''}</td></tr>`;
    })
    .join('');
  const table = list.items.length
    ? `<div class="table-wrap"><table id="certificates"><thead><tr><th scope="col">Certificate</th><th scope="col">Type</th><th scope="col">SHA-256</th><th scope="col">Registry</th><th scope="col">Issued</th><th scope="col">Actions</th></tr></thead><tbody>${rows}</tbody></table></div>`
    : '<p id="empty">No certificate yet (a new one shows here moments after it is issued).</p>';
  const more = list.next_cursor ? `<p><a href="/console/certificates?cursor=${encodeURIComponent(list.next_cursor)}">Older certificates</a></p>` : '';
  const select = (name: string, id: string, values: readonly string[], selected: string) =>
    `<select id="${id}" name="${name}"${m.attrs(name)}>${values.map((v) => `<option value="${esc(v)}"${v === selected ? ' selected' : ''}>${esc(v)}</option>`).join('')}</select>${m.under(name)}`;
  const form = canIssue
    ? `<form method="post" action="/console/certificates" enctype="multipart/form-data" class="card" id="issue">
<h2>Issue a certificate</h2>${m.summary()}
${hidden('csrf', viewer.csrf)}
<label for="cert-file">File (UTF-8 text: JSON, CSV, …; up to ${MAX_CONTENT_CHARS_TEXT} characters)</label>
<input id="cert-file" name="file" type="file"${m.attrs('file')}>${m.under('file')}
<label for="cert-content">Or paste the content</label>
<textarea id="cert-content" name="content" rows="6" spellcheck="false"${m.attrs('content')}>${esc(d.content)}</textarea>${m.under('content')}
<label for="cert-type">Artifact type</label>${select('artifact_type', 'cert-type', ARTIFACT_CHOICES, d.artifact_type)}
<label for="cert-visibility">Registry listing</label>${select('visibility', 'cert-visibility', ['private', 'public'], d.visibility)}
<p><button type="submit">Issue</button></p>
</form>`
    : `<p>Your role (${esc(viewer.user.role)}) can see certificates; issuing and publishing need the scope certificates:write.</p>`;
  return page('Certificates', table + more + form, { viewer, flash: options.flash });
}

export function issuedPage(viewer: ConsoleViewer, c: Issued, visibility: string): string {
  return page(
    'Certificate issued',
    `<p class="flash ok" role="status">The certificate is signed and recorded.</p>
<dl class="facts"><dt>Certificate</dt><dd><code id="certificate-id">${esc(c.certificate_id)}</code></dd><dt>SHA-256</dt><dd class="hash">${esc(c.dataset_hash)}</dd><dt>Issued</dt><dd>${esc(c.issued_at)}</dd><dt>Signing key</dt><dd><code>${esc(c.signing_key_id)}</code></dd><dt>Registry</dt><dd>${esc(visibility)}</dd></dl>
<p>${verifyLink(c.certificate_id)}</p>
${visibility === 'private' ? `<p>${publishForm(viewer, c.certificate_id)}</p>` : ''}
<p><a href="/console/certificates">All certificates</a></p>`,
    { viewer },
  );
}
