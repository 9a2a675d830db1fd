import type { ConsoleViewer } from '../people/console-auth';
import { esc, hidden, money, page, timeLeft } from './layout';

/** One pending review as the queue shows it (the transaction's view, and the rule that escalated it). */
export interface PendingReview {
  transaction_id: string;
  authorization_id: string;
  amount_cents: number;
  currency: string;
  merchant_id: string;
  purpose_tag: string;
  delegated_authority: string | null;
  expires_at: string | null;
  created_at: string | null;
  escalated_by: string | null;
}

function card(r: PendingReview, viewer: ConsoleViewer, now: Date): string {
  const id = esc(r.authorization_id);
  const canReview = viewer.scopes.includes('approvals:manage');
  const forms = canReview
    ? `<div class="actions">
<form method="post" action="/console/approvals/${id}/approve" aria-label="Approve ${id}">
${hidden('csrf', viewer.csrf)}${hidden('currency', r.currency)}
<label for="amount-${id}">Approve a lower amount (optional, in ${esc(r.currency)})</label>
<input id="amount-${id}" name="amount" type="text" inputmode="decimal" pattern="[0-9]+([.][0-9]+)?" placeholder="${esc(money(r.amount_cents, r.currency).split(' ')[0])}">
<label for="approve-note-${id}">Note (optional)</label>
<textarea id="approve-note-${id}" name="note" maxlength="2000" rows="2"></textarea>
<p><button type="submit" name="action" value="approve">Approve</button></p>
</form>
<form method="post" action="/console/approvals/${id}/reject" aria-label="Reject ${id}">
${hidden('csrf', viewer.csrf)}
<label for="reject-note-${id}">Why reject? (note)</label>
<textarea id="reject-note-${id}" name="note" maxlength="2000" rows="2"></textarea>
<p><button type="submit" class="danger" name="action" value="reject">Reject</button></p>
</form>
</div>`
    : '';
  return `<section class="card" data-authorization-id="${id}" aria-labelledby="h-${id}">
<h2 id="h-${id}">${esc(money(r.amount_cents, r.currency))} to ${esc(r.merchant_id)}</h2>
<dl class="facts">
<dt>Purpose</dt><dd>${esc(r.purpose_tag)}</dd>
<dt>Agent</dt><dd>${esc(r.delegated_authority ?? '(none given)')}</dd>
<dt>Escalated by</dt><dd class="rule">${esc(r.escalated_by ?? 'the policy')}</dd>
<dt>Time left</dt><dd><span data-expires-at="${esc(r.expires_at ?? '')}">${esc(timeLeft(r.expires_at, now))}</span></dd>
<dt>Transaction</dt><dd><a href="/console/transactions/${esc(r.transaction_id)}">${esc(r.transaction_id)}</a></dd>
</dl>
${forms}
</section>`;
}

export function approvalsPage(viewer: ConsoleViewer, items: PendingReview[], nextCursor: string | null, now: Date, flash: { kind: 'ok' | 'error'; text: string } | null): string {
  const body = items.length
    ? items.map((r) => card(r, viewer, now)).join('\n')
    : '<p id="empty">No payment is waiting for review.</p>';
  const more = nextCursor ? `<p><a href="/console/approvals?cursor=${encodeURIComponent(nextCursor)}">Next page</a></p>` : '';
  return page('Approvals', body + more, { viewer, flash });
}
