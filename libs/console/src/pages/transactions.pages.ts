import { TRANSACTION_STATUSES } from '@app/commerce';
import type { ConsoleViewer } from '../people/console-auth';
import { esc, money, page } from './layout';
import { jsonForScript, SDK_BUNDLE_URL, TIMELINE_SCRIPT_URL } from './timeline-script';

export interface TransactionListItem {
  transaction_id: string;
  status: string;
  amount_cents: number;
  currency: string;
  merchant_id: string;
  purpose_tag: string;
  delegated_authority: string | null;
  created_at: string | null;
}
export type ListFilters = Partial<Record<'status' | 'merchant_id' | 'agent' | 'from' | 'to', string>>;

const field = (name: keyof ListFilters, label: string, value: string | undefined, type = 'text') =>
  `<div><label for="f-${name}">${esc(label)}</label><input id="f-${name}" name="${name}" type="${type}" value="${esc(value ?? '')}"></div>`;

export function transactionsPage(viewer: ConsoleViewer, items: TransactionListItem[], filters: ListFilters, nextCursor: string | null): string {
  const statuses = ['', ...TRANSACTION_STATUSES].map((s) => `<option value="${esc(s)}"${s === (filters.status ?? '') ? ' selected' : ''}>${esc(s || 'any')}</option>`).join('');
  const form = `<form method="get" action="/console/transactions" class="filters" role="search">
<div><label for="f-status">Status</label><select id="f-status" name="status">${statuses}</select></div>
${field('merchant_id', 'Merchant', filters.merchant_id)}${field('agent', 'Agent', filters.agent)}${field('from', 'From (ISO date)', filters.from)}${field('to', 'To (ISO date)', filters.to)}
<div><button type="submit">Filter</button></div>
</form>`;
  const rows = items
    .map(
      (t) => `<tr><td><a href="/console/transactions/${esc(t.transaction_id)}">${esc(t.transaction_id)}</a></td><td class="status">${esc(t.status)}</td><td>${esc(money(t.amount_cents, t.currency))}</td><td>${esc(t.merchant_id)}</td><td>${esc(t.purpose_tag)}</td><td>${esc(t.delegated_authority ?? '')}</td><td>${esc(t.created_at ?? '')}</td></tr>`,
    )
    .join('\n');
  const table = items.length
    ? `<div class="table-wrap"><table id="transactions"><thead><tr><th scope="col">Transaction</th><th scope="col">Status</th><th scope="col">Amount</th><th scope="col">Merchant</th><th scope="col">Purpose</th><th scope="col">Agent</th><th scope="col">Created</th></tr></thead><tbody>${rows}</tbody></table></div>`
    : '<p id="empty">No transaction matches.</p>';
  const query = new URLSearchParams(Object.entries(filters).filter(([, v]) => v) as [string, string][]);
  if (nextCursor) query.set('cursor', nextCursor);
  const more = nextCursor ? `<p><a href="/console/transactions?${esc(query.toString())}">Next page</a></p>` : '';
  return page('Transactions', form + table + more, { viewer });
}

export interface TimelineView {
  transaction_id: string;
  chain_valid: boolean;
  chain: unknown;
  events: { event_type: string; sequence: number; timestamp: string; actor: { type: string; id: string }; status: unknown; metadata: unknown; hash: string; prev_hash: string | null }[];
}
export interface ReplayView {
  reproduced: boolean;
  recorded: { decision: string; reason_code: string | null };
  replayed: { decision: string; reason_code: string | null };
  policy_hash_matches: boolean;
}

/** Which link broke, as the server's verification says it. */
function brokenText(chain: unknown): string {
  const c = (chain ?? {}) as { broken_at_revision?: number; reason?: string };
  return `Broken${typeof c.broken_at_revision === 'number' ? ` at event ${c.broken_at_revision + 1}` : ''}${c.reason ? ` (${c.reason})` : ''}`;
}

export function timelinePage(viewer: ConsoleViewer, t: TimelineView, replay: ReplayView | null, reviews: { payload: Record<string, unknown> }[]): string {
  const status = t.events.length ? String(t.events[t.events.length - 1].status ?? '') : '';
  const events = t.events
    .map(
      (e) => `<li data-event-type="${esc(e.event_type)}"><strong>${esc(e.sequence)}. ${esc(e.event_type)}</strong> → <span class="status">${esc(e.status)}</span>
<dl class="facts"><dt>Time</dt><dd>${esc(e.timestamp)}</dd><dt>Actor</dt><dd>${esc(`${e.actor.type}:${e.actor.id}`)}</dd><dt>Hash</dt><dd class="hash">${esc(e.hash)}</dd><dt>Previous</dt><dd class="hash">${esc(e.prev_hash ?? '(first)')}</dd></dl>
<details><summary>Metadata</summary><pre>${esc(JSON.stringify(e.metadata, null, 2))}</pre></details></li>`,
    )
    .join('\n');
  const replayText = replay
    ? `${replay.reproduced ? 'Reproduced' : 'Not reproduced'}: recorded ${replay.recorded.decision}${replay.recorded.reason_code ? ` (${replay.recorded.reason_code})` : ''}, replayed ${replay.replayed.decision}${replay.replayed.reason_code ? ` (${replay.replayed.reason_code})` : ''}; policy hash ${replay.policy_hash_matches ? 'matches' : 'differs'}`
    : 'Not available';
  const reviewList = reviews.length
    ? `<ul id="reviews">${reviews.map((r) => `<li>${esc(r.payload.review)} by ${esc((r.payload.reviewer as { name?: string | null; actor?: string })?.name ?? (r.payload.reviewer as { actor?: string })?.actor)}${r.payload.note ? `: “${esc(r.payload.note)}”` : ''}</li>`).join('')}</ul>`
    : '<p>No human review.</p>';
  return page(
    `Transaction ${t.transaction_id}`,
    `<dl class="facts"><dt>Status</dt><dd id="tx-status">${esc(status)}</dd>
<dt>Hash chain (server)</dt><dd id="chain-verdict" class="verdict ${t.chain_valid ? 'valid' : 'invalid'}">${t.chain_valid ? 'Valid' : esc(brokenText(t.chain))}</dd>
<dt>Checked in your browser</dt><dd id="browser-verdict" data-state="pending" data-status="${esc(status)}" aria-live="polite"><strong class="title">Checking…</strong> <span class="detail">(needs JavaScript)</span></dd>
<dt>Replay</dt><dd id="replay-verdict">${esc(replayText)}</dd></dl>
<script type="application/json" id="timeline-data">${jsonForScript(t)}</script>
<h2>Check it yourself</h2>
<p>Download <a href="/console/transactions/${esc(t.transaction_id)}/timeline.json" download>the timeline</a>${status === 'receipt_issued' ? `, <a href="/console/transactions/${esc(t.transaction_id)}/receipt.json" download>the receipt</a>` : ''} and <a href="/.well-known/signing-keys.json" download="signing-keys.json">the signing keys</a>, then, offline:</p>
<pre><code>npx sigil timeline verify timeline-${esc(t.transaction_id)}.json${status === 'receipt_issued' ? ` --receipt receipt-${esc(t.transaction_id)}.json` : ''} --keys signing-keys.json</code></pre>
<h2>Signed reviews</h2>${reviewList}
<h2>Timeline</h2><ol class="timeline" id="timeline">${events}</ol>
<p><a href="/console/transactions">All transactions</a></p>`,
    { viewer, scripts: [SDK_BUNDLE_URL, TIMELINE_SCRIPT_URL] },
  );
}
