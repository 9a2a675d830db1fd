import type { ConsoleViewer } from '../people/console-auth';
import { FieldMessages, FormProblem } from './field-messages';
import { esc, hidden, page } from './layout';
import { DiffLine, prettyPolicy } from './policy-diff';

/** A recorded version, as GET /api/cdp/policies/{id} answers it. */
export interface PolicyVersionView {
  policy_id: string;
  version: number;
  policy_hash: string;
  policy: unknown;
  created_at: string;
}

/** A simulation's answer (POST /api/cdp/policies/{id}/simulate). */
export interface SimulationView {
  version: number;
  decision: string;
  reason_code: string | null;
  checks: { rule: string; passed: boolean; detail?: string }[];
  spend_caps_evaluated_against: string;
}

type Flash = { kind: 'ok' | 'error'; text: string } | null;

export interface PolicyPageOptions {
  flash?: Flash;
  /** The document typed (shown again, as typed, with the messages). */
  draft?: string;
  problem?: FormProblem | null;
  request?: string;
  simulation?: SimulationView | null;
  simulationProblem?: FormProblem | null;
}

/**
 * The messages of a policy's fields. The editor is one textarea of JSON, so each message names its
 * field's path (`limits.USD.review_above_cents`) in a list the textarea points to.
 */
function fieldList(problem: FormProblem | null, id: string): string {
  if (!problem || !problem.issues.length) return '';
  const items = problem.issues.map((i) => `<li data-field="${esc(i.field)}"><code>${esc(i.field || '(the document)')}</code> ${esc(i.message)}</li>`).join('');
  return `<ul class="field-error" id="err-${id}">${items}</ul>`;
}

const textareaFor = (problem: FormProblem | null, id: string) =>
  problem && problem.issues.length ? ` aria-invalid="true" aria-describedby="err-${id}"` : '';

function simulationResult(s: SimulationView): string {
  const checks = s.checks.map((c) => `<li class="${c.passed ? 'passed' : 'failed'}">${c.passed ? '✓' : '✗'} <code>${esc(c.rule)}</code>${c.detail ? `: ${esc(c.detail)}` : ''}</li>`).join('');
  return `<section class="card" id="simulation" aria-labelledby="sim-h"><h3 id="sim-h">Result against version ${esc(s.version)}</h3>
<dl class="facts"><dt>Decision</dt><dd id="sim-decision">${esc(s.decision)}</dd><dt>Reason</dt><dd>${esc(s.reason_code ?? '(none)')}</dd><dt>Spend caps counted</dt><dd>${esc(s.spend_caps_evaluated_against)}</dd></dl>
<ol id="sim-checks">${checks}</ol></section>`;
}

export const sampleRequest = (now: Date) =>
  JSON.stringify({ amount_cents: 25_000, currency: 'USD', merchant_id: 'm_example', purpose_tag: 'travel', expiration_iso: new Date(now.getTime() + 3600_000).toISOString() }, null, 2);

export function policyPage(viewer: ConsoleViewer, policyId: string, current: PolicyVersionView | null, canEdit: boolean, o: PolicyPageOptions = {}): string {
  const id = esc(policyId);
  const base = `/console/policies/${id}`;
  const m = new FieldMessages(o.problem ?? null, Object.fromEntries((o.problem?.issues ?? []).map((i) => [i.field, 'policy-json'])));
  const s = new FieldMessages(o.simulationProblem ?? null, Object.fromEntries((o.simulationProblem?.issues ?? []).map((i) => [i.field, 'sim-request'])));
  const facts = current
    ? `<dl class="facts" id="current"><dt>Version</dt><dd id="current-version">${esc(current.version)}</dd><dt>Recorded</dt><dd>${esc(current.created_at)}</dd><dt>Hash</dt><dd class="hash">${esc(current.policy_hash)}</dd></dl>
<p><a href="${base}/versions">Versions and differences</a></p>`
    : '<p id="no-policy">This policy has no version yet: saving records version 1.</p>';
  const text = o.draft ?? (current ? prettyPolicy(current.policy) : '{\n  "limits": {\n    "USD": { "per_transaction_cents": 50000, "review_above_cents": 20000 }\n  }\n}\n');
  const editor = canEdit
    ? `<form method="post" action="${base}" class="card" id="edit-policy">
<h2>Edit</h2>${m.summary()}
${hidden('csrf', viewer.csrf)}
<label for="policy-json">Policy document (JSON)</label>
<textarea id="policy-json" name="policy" rows="18" spellcheck="false"${textareaFor(o.problem ?? null, 'policy-json')}>${esc(text)}</textarea>${fieldList(o.problem ?? null, 'policy-json')}
<p><button type="submit">Save a new version</button></p>
</form>`
    : `<h2>Document</h2><pre id="policy-json">${esc(text)}</pre><p>Your role (${esc(viewer.user.role)}) can read policies; saving one needs the scope payments:write.</p>`;
  const simulate = current
    ? `<form method="post" action="${base}/simulate" class="card" id="simulate">
<h2>Simulate a request</h2><p>Evaluated against the current version (${esc(current.version)}); nothing is recorded.</p>${s.summary()}
${hidden('csrf', viewer.csrf)}
<label for="sim-request">Authorization request (payment_authorization.v1, JSON)</label>
<textarea id="sim-request" name="request" rows="9" spellcheck="false"${textareaFor(o.simulationProblem ?? null, 'sim-request')}>${esc(o.request ?? sampleRequest(new Date()))}</textarea>${fieldList(o.simulationProblem ?? null, 'sim-request')}
<p><button type="submit" class="secondary">Simulate</button></p>
</form>${o.simulation ? simulationResult(o.simulation) : ''}`
    : '';
  const open = `<form method="get" action="/console/policies" class="filters" role="search"><div><label for="open-policy">Open another policy (id)</label><input id="open-policy" name="policy_id" type="text" maxlength="64" value="${id}"></div><div><button type="submit" class="secondary">Open</button></div></form>`;
  return page(`Policy ${policyId}`, facts + editor + simulate + open, { viewer, flash: o.flash });
}

function diffView(all: DiffLine[]): string {
  const note = all[0]?.kind === 'too_different' ? `<p id="diff-too-different">${esc(all[0].text)}</p>` : '';
  const lines = note ? all.slice(1) : all;
  const rows = lines.map((l) => (l.kind === 'same' ? `<span class="same">  ${esc(l.text)}</span>` : l.kind === 'added' ? `<ins>+ ${esc(l.text)}</ins>` : `<del>- ${esc(l.text)}</del>`));
  return `${note}<pre class="diff" id="diff" aria-label="Lines removed start with a minus, lines added with a plus">${rows.join('\n')}</pre>`;
}

export function versionsPage(viewer: ConsoleViewer, policyId: string, versions: PolicyVersionView[], pick: { from: number; to: number } | null, diff: DiffLine[] | null): string {
  const base = `/console/policies/${esc(policyId)}`;
  const options = (selected: number | undefined) => versions.map((v) => `<option value="${v.version}"${v.version === selected ? ' selected' : ''}>${v.version} (${esc(v.created_at)})</option>`).join('');
  const rows = versions.map((v) => `<tr><td>${esc(v.version)}</td><td>${esc(v.created_at)}</td><td class="hash">${esc(v.policy_hash)}</td></tr>`).join('');
  const compare =
    versions.length > 1
      ? `<form method="get" action="${base}/versions" class="filters" id="compare"><div><label for="from">From version</label><select id="from" name="from">${options(pick?.from)}</select></div><div><label for="to">To version</label><select id="to" name="to">${options(pick?.to)}</select></div><div><button type="submit">Compare</button></div></form>`
      : '<p>Only one version so far.</p>';
  const shown = pick && diff ? `<h2>Version ${pick.from} → ${pick.to}</h2>${diff.some((l) => l.kind !== 'same') ? '' : '<p>No difference.</p>'}${diffView(diff)}` : '';
  return page(
    `Versions of ${policyId}`,
    `<div class="table-wrap"><table id="versions"><thead><tr><th scope="col">Version</th><th scope="col">Recorded</th><th scope="col">Hash</th></tr></thead><tbody>${rows}</tbody></table></div>${compare}${shown}<p><a href="${base}">Back to the policy</a></p>`,
    { viewer },
  );
}
