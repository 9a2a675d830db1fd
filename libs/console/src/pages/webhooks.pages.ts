import { randomUUID } from 'node:crypto';
import type { ConsoleViewer } from '../people/console-auth';
import { FieldMessages, FormProblem } from './field-messages';
import { esc, hidden, page } from './layout';

/** An endpoint as the API answers it (GET /api/cdp/webhooks/endpoints/{id}; never a secret). */
export interface EndpointItem {
  id: string;
  url: string;
  event_types: readonly string[];
  description: string | null;
  enabled: boolean;
  disabled_reason: string | null;
  disabled_at: string | null;
  created_at: string;
}

/** A delivery of the history (GET /api/cdp/webhooks/deliveries). */
export interface DeliveryItem {
  id: string;
  endpoint_id: string;
  webhook_id: string;
  event_type: string;
  transaction_id: string | null;
  status: string;
  attempts: number;
  series: number;
  last_status_code: number | null;
  last_error: string | null;
  created_at: string;
  next_attempt_at: string | null;
}

/** One delivery with its payload and attempts (GET /api/cdp/webhooks/deliveries/{id}). */
export interface DeliveryDetail extends DeliveryItem {
  payload: unknown;
  attempt_history: {
    attempt: number;
    series: number;
    attempted_at: string | null;
    status_code: number | null;
    latency_ms: number | null;
    error: string | null;
    response_body: string | null;
    outcome: string;
    next_attempt_at: string | null;
  }[];
}

/** What the endpoint forms hold when they come back with messages. */
export interface EndpointDraft {
  url: string;
  description: string;
  event_types: readonly string[];
}

type Flash = { kind: 'ok' | 'error'; text: string } | null;

/** The most of a receiver's response body a page shows (it is kept longer in the API). */
export const RESPONSE_BODY_SHOWN = 2000;

/** Form field names of the event-type checkboxes: one name each (the console's form parser keeps a field's first value). */
export const eventField = (type: string) => `event:${type}`;

const endpointInputs = { url: 'ep-url', description: 'ep-description', event_types: 'ep-events' };

/** URL, description and the event types to subscribe to: the create and edit forms alike. */
function endpointFields(eventTypes: readonly string[], draft: EndpointDraft, m: FieldMessages): string {
  const boxes = eventTypes
    .map((t, i) => `<li><input type="checkbox" id="ev-${i}" name="${esc(eventField(t))}" value="on"${draft.event_types.includes(t) ? ' checked' : ''}><label class="inline" for="ev-${i}">${esc(t)}</label></li>`)
    .join('');
  return `<label for="ep-url">URL (https://…)</label>
<input id="ep-url" name="url" type="text" inputmode="url" required maxlength="2048" value="${esc(draft.url)}"${m.attrs('url')}>${m.under('url')}
<label for="ep-description">Description (optional)</label>
<input id="ep-description" name="description" type="text" maxlength="500" value="${esc(draft.description)}"${m.attrs('description')}>${m.under('description')}
<fieldset id="ep-events"${m.attrs('event_types')}><legend>Event types</legend><ul class="checks">${boxes}</ul></fieldset>${m.under('event_types')}`;
}

export function endpointsPage(viewer: ConsoleViewer, endpoints: EndpointItem[], eventTypes: readonly string[], options: { flash?: Flash; problem?: FormProblem | null; draft?: EndpointDraft } = {}): string {
  const m = new FieldMessages(options.problem ?? null, endpointInputs);
  const draft = options.draft ?? { url: '', description: '', event_types: eventTypes };
  const rows = endpoints
    .map(
      (e) =>
        `<tr data-endpoint-id="${esc(e.id)}"><td><a href="/console/webhooks/${esc(e.id)}">${esc(e.url)}</a></td><td>${e.enabled ? 'enabled' : `disabled${e.disabled_reason ? ` (${esc(e.disabled_reason)})` : ''}`}</td><td>${esc(e.event_types.length === eventTypes.length ? 'all' : e.event_types.join(', '))}</td><td>${esc(e.description ?? '')}</td></tr>`,
    )
    .join('');
  const table = endpoints.length
    ? `<div class="table-wrap"><table id="endpoints"><thead><tr><th scope="col">URL</th><th scope="col">State</th><th scope="col">Events</th><th scope="col">Description</th></tr></thead><tbody>${rows}</tbody></table></div>`
    : '<p id="empty">No endpoint yet.</p>';
  const form = `<form method="post" action="/console/webhooks" class="card" id="create-endpoint">
<h2>Add an endpoint</h2>${m.summary()}
${hidden('csrf', viewer.csrf)}${hidden('form_key', randomUUID())}${endpointFields(eventTypes, draft, m)}
<p><button type="submit">Create endpoint</button></p>
</form>`;
  return page('Webhooks', table + form, { viewer, flash: options.flash });
}

/** The secret, once: after creating an endpoint or rotating its secret (null: the create form was sent again, and its secret was shown the first time). */
export function secretPage(viewer: ConsoleViewer, endpoint: { id: string; url: string }, secret: string | null, rotated: { previous_secret_expires_at: string } | null): string {
  const link = `<p><a href="/console/webhooks/${esc(endpoint.id)}" id="to-endpoint">Go to the endpoint</a></p>`;
  if (secret === null) {
    return page(
      'Endpoint created',
      `<p class="flash ok" role="status" id="repeated">This form was sent before: the endpoint exists, and its signing secret was shown then, once. If it was not copied, rotate the secret on the endpoint's page.</p>
<dl class="facts"><dt>Endpoint</dt><dd>${esc(endpoint.url)}</dd></dl>${link}`,
      { viewer },
    );
  }
  const note = rotated
    ? `<p>The previous secret keeps signing beside this one until ${esc(rotated.previous_secret_expires_at)}.</p>`
    : '<p>Deliveries are signed with it (Standard Webhooks: <code>webhook-signature</code>).</p>';
  return page(
    rotated ? 'New signing secret' : 'Endpoint created',
    `<p class="flash ok" role="status">Copy the signing secret now: it is not shown again.</p>
<dl class="facts"><dt>Endpoint</dt><dd>${esc(endpoint.url)}</dd><dt>Signing secret</dt><dd><code id="secret">${esc(secret)}</code></dd></dl>${note}
${link}`,
    { viewer },
  );
}

const action = (viewer: ConsoleViewer, to: string, label: string, extra = '', cls = '') =>
  `<form method="post" action="${esc(to)}" class="inline">${hidden('csrf', viewer.csrf)}${extra}<button type="submit"${cls ? ` class="${cls}"` : ''}>${esc(label)}</button></form>`;

export function deliveriesTable(items: DeliveryItem[]): string {
  if (!items.length) return '<p id="no-deliveries">No delivery yet.</p>';
  const rows = items
    .map(
      (d) =>
        `<tr data-delivery-id="${esc(d.id)}"><td><a href="/console/webhooks/deliveries/${esc(d.id)}">${esc(d.event_type)}</a></td><td class="status">${esc(d.status)}</td><td>${esc(d.attempts)}</td><td>${esc(d.last_status_code ?? '')}${d.last_error ? ` ${esc(d.last_error)}` : ''}</td><td>${esc(d.created_at)}</td></tr>`,
    )
    .join('');
  return `<div class="table-wrap"><table id="deliveries"><thead><tr><th scope="col">Event</th><th scope="col">Status</th><th scope="col">Attempts</th><th scope="col">Last response</th><th scope="col">Created</th></tr></thead><tbody>${rows}</tbody></table></div>`;
}

export function endpointPage(
  viewer: ConsoleViewer,
  e: EndpointItem,
  eventTypes: readonly string[],
  deliveries: { items: DeliveryItem[]; next_cursor: string | null; status?: string },
  options: { flash?: Flash; problem?: FormProblem | null; draft?: EndpointDraft; since?: string; sinceProblem?: FormProblem | null } = {},
): string {
  const m = new FieldMessages(options.problem ?? null, endpointInputs);
  const s = new FieldMessages(options.sinceProblem ?? null, { since: 'recover-since' });
  const draft = options.draft ?? { url: e.url, description: e.description ?? '', event_types: e.event_types };
  const base = `/console/webhooks/${e.id}`;
  const state = e.enabled ? 'Enabled' : `Disabled${e.disabled_reason ? ` (${e.disabled_reason})` : ''}${e.disabled_at ? ` since ${e.disabled_at}` : ''}`;
  const statuses = ['', 'pending', 'delivered', 'failed'].map((v) => `<option value="${v}"${v === (deliveries.status ?? '') ? ' selected' : ''}>${v || 'any'}</option>`).join('');
  const more = deliveries.next_cursor
    ? `<p><a href="${esc(`${base}?${new URLSearchParams({ ...(deliveries.status ? { status: deliveries.status } : {}), cursor: deliveries.next_cursor })}`)}">Older deliveries</a></p>`
    : '';
  return page(
    `Endpoint ${e.url}`,
    `<dl class="facts"><dt>Id</dt><dd><code>${esc(e.id)}</code></dd><dt>State</dt><dd id="endpoint-state">${esc(state)}</dd><dt>Created</dt><dd>${esc(e.created_at)}</dd></dl>
<div class="actions" id="endpoint-actions">
${action(viewer, `${base}/test`, 'Send a test')}
${action(viewer, `${base}/rotate-secret`, 'Rotate the secret', '', 'secondary')}
${e.enabled ? action(viewer, `${base}/disable`, 'Disable', '', 'secondary') : action(viewer, `${base}/enable`, 'Enable')}
${action(viewer, `${base}/delete`, 'Delete', '', 'danger')}
</div>
<form method="post" action="${esc(base)}" class="card" id="edit-endpoint">
<h2>Edit</h2>${m.summary()}
${hidden('csrf', viewer.csrf)}${endpointFields(eventTypes, draft, m)}
<p><button type="submit">Save changes</button></p>
</form>
<form method="post" action="${esc(`${base}/recover`)}" class="card" id="recover">
<h2>Recover failed deliveries</h2>${s.summary()}
${hidden('csrf', viewer.csrf)}
<label for="recover-since">Since (ISO-8601 date-time with its offset)</label>
<input id="recover-since" name="since" type="text" required value="${esc(options.since ?? '')}"${s.attrs('since')}>${s.under('since')}
<p><button type="submit">Re-send failed deliveries</button></p>
</form>
<h2>Deliveries</h2>
<form method="get" action="${esc(base)}" class="filters" role="search"><div><label for="d-status">Status</label><select id="d-status" name="status">${statuses}</select></div><div><button type="submit">Filter</button></div></form>
${deliveriesTable(deliveries.items)}${more}
<p><a href="/console/webhooks">All endpoints</a></p>`,
    { viewer, flash: options.flash },
  );
}

const clip = (text: string) => (text.length > RESPONSE_BODY_SHOWN ? `${text.slice(0, RESPONSE_BODY_SHOWN)}… (${text.length - RESPONSE_BODY_SHOWN} more characters not shown)` : text);

export function deliveryPage(viewer: ConsoleViewer, d: DeliveryDetail, flash: Flash): string {
  const attempts = d.attempt_history
    .map(
      (a) => `<li data-outcome="${esc(a.outcome)}"><strong>Attempt ${esc(a.attempt)}</strong> (series ${esc(a.series)}): ${esc(a.outcome)}
<dl class="facts"><dt>At</dt><dd>${esc(a.attempted_at ?? '')}</dd><dt>Response</dt><dd class="status-code">${esc(a.status_code ?? 'none')}</dd>${a.latency_ms !== null ? `<dt>Latency</dt><dd>${esc(a.latency_ms)} ms</dd>` : ''}${a.error ? `<dt>Error</dt><dd>${esc(a.error)}</dd>` : ''}${a.next_attempt_at ? `<dt>Next attempt</dt><dd>${esc(a.next_attempt_at)}</dd>` : ''}</dl>
${a.response_body ? `<details><summary>Response body</summary><pre class="response-body">${esc(clip(a.response_body))}</pre></details>` : ''}</li>`,
    )
    .join('\n');
  const canRedeliver = d.status !== 'pending';
  return page(
    `Delivery ${d.event_type}`,
    `<dl class="facts"><dt>Id</dt><dd><code>${esc(d.id)}</code></dd><dt>webhook-id</dt><dd><code>${esc(d.webhook_id)}</code></dd><dt>Status</dt><dd id="delivery-status">${esc(d.status)}</dd><dt>Endpoint</dt><dd><a href="/console/webhooks/${esc(d.endpoint_id)}">${esc(d.endpoint_id)}</a></dd>${d.transaction_id ? `<dt>Transaction</dt><dd><a href="/console/transactions/${esc(d.transaction_id)}">${esc(d.transaction_id)}</a></dd>` : ''}</dl>
${canRedeliver ? `<form method="post" action="/console/webhooks/deliveries/${esc(d.id)}/redeliver">${hidden('csrf', viewer.csrf)}<p><button type="submit" id="redeliver">Redeliver</button></p></form>` : '<p>Attempts are still going on; it can be redelivered once it has finished.</p>'}
<h2>Attempts</h2>${attempts ? `<ol class="timeline" id="attempts">${attempts}</ol>` : '<p>No attempt yet.</p>'}
<h2>Payload</h2><pre id="payload">${esc(JSON.stringify(d.payload, null, 2))}</pre>`,
    { viewer, flash },
  );
}
