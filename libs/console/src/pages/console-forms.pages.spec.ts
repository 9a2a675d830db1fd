import type { ConsoleViewer } from '../people/console-auth';
import { certificatesPage, issuedPage } from './certificates.pages';
import { FieldMessages, issuesOf } from './field-messages';
import { policyPage, versionsPage } from './policies.pages';
import { policyDiff, prettyPolicy } from './policy-diff';
import { deliveryPage, endpointPage, endpointsPage, RESPONSE_BODY_SHOWN, secretPage } from './webhooks.pages';

const viewer = (role: 'admin' | 'viewer' = 'admin'): ConsoleViewer =>
  ({
    user: { user_id: 'usr_1', org_id: 'org_1', email: 'a@example.com', display_name: 'Ada <admin>', role, password_hash: null },
    session: { session_id: 'ses_1' },
    scopes: role === 'admin' ? ['payments:read', 'payments:write', 'webhooks:manage', 'certificates:write'] : ['payments:read', 'receipts:read'],
    csrf: 'tok"en',
  }) as unknown as ConsoleViewer;

const XSS = `<script>alert("x")</script>`;
/** No markup of ours may come from data: no raw script tag, and no attribute broken out of. */
const clean = (html: string) => {
  expect(html).not.toContain('<script>alert');
  expect(html).not.toMatch(/<script(?! src="\/console\/assets\/console\.js\?v=[0-9a-f]{12}" defer><\/script>)/);
  expect(html).not.toMatch(/ style=|<style/);
};

describe('field messages', () => {
  it('reads the API\u2019s details and puts each message under its input, linked from the summary', () => {
    const issues = issuesOf([{ field: 'url', message: 'must be <https>' }, { field: 'event_types.0', message: 'bad' }, { message: 'no field' }, 'junk', null]);
    expect(issues).toEqual([
      { field: 'url', message: 'must be <https>' },
      { field: 'event_types.0', message: 'bad' },
      { field: '', message: 'no field' },
    ]);
    const m = new FieldMessages({ message: 'Invalid body: url', issues }, { url: 'ep-url', event_types: 'ep-events' });
    expect(m.attrs('url')).toBe(' aria-invalid="true" aria-describedby="err-ep-url"');
    expect(m.attrs('description')).toBe('');
    expect(m.under('url')).toBe('<p class="field-error" id="err-ep-url" data-field="url">must be &#60;https&#62;</p>');
    // A nested issue belongs to its input, and names the part that is wrong.
    expect(m.under('event_types')).toContain('>0: bad</p>');
    const summary = m.summary();
    expect(summary).toContain('role="alert"');
    expect(summary).toContain('<a href="#ep-url"><code>url</code>: must be &#60;https&#62;</a>');
    expect(summary).toContain('<li data-field=""><code>(the whole form)</code>: no field</li>');
    expect(new FieldMessages(null).summary()).toBe('');
  });
});

describe('webhooks pages', () => {
  const endpoint = { id: 'ep_1', url: `https://x.example/${XSS}`, event_types: ['receipt.issued'], description: XSS, enabled: false, disabled_reason: XSS, disabled_at: null, created_at: '2026-11-25T00:00:00Z' };

  it('escapes every value: URLs, descriptions, typed input, secrets and the CSRF token', () => {
    const list = endpointsPage(viewer(), [endpoint], ['receipt.issued', 'execution.failed'], { problem: { message: XSS, issues: [{ field: 'url', message: XSS }] }, draft: { url: XSS, description: XSS, event_types: [] } });
    clean(list);
    expect(list).toContain('value="tok&#34;en"');
    expect(list).toContain('value="&#60;script&#62;alert(&#34;x&#34;)&#60;/script&#62;"');
    expect(list).toContain('<p class="field-error" id="err-ep-url" data-field="url">&#60;script&#62;');
    // Each event type has its own checkbox, and its own label.
    expect(list).toMatch(/<input type="checkbox" id="ev-0" name="event:receipt\.issued" value="on"><label class="inline" for="ev-0">receipt\.issued<\/label>/);
    clean(secretPage(viewer(), endpoint, `whsec_${XSS}`, { previous_secret_expires_at: XSS }));
    clean(endpointPage(viewer(), endpoint, ['receipt.issued'], { items: [], next_cursor: null }, { since: XSS, sinceProblem: { message: 'bad', issues: [{ field: 'since', message: XSS }] } }));
  });

  it('shows attempts with their codes and the receiver\u2019s body escaped and cut short', () => {
    const body = `${XSS}${'y'.repeat(RESPONSE_BODY_SHOWN + 10)}`;
    const html = deliveryPage(
      viewer(),
      {
        id: 'dlv_1', endpoint_id: 'ep_1', webhook_id: 'msg_1', event_type: 'webhook.test', transaction_id: null, status: 'failed', attempts: 1, series: 1, last_status_code: 500, last_error: null, created_at: 'now', next_attempt_at: null,
        payload: { note: XSS },
        attempt_history: [{ attempt: 1, series: 1, attempted_at: 'now', status_code: 500, latency_ms: 3, error: XSS, response_body: body, outcome: 'failed', next_attempt_at: null }],
      },
      null,
    );
    clean(html);
    expect(html).toContain('<dd class="status-code">500</dd>');
    expect(html).toContain('more characters not shown');
    expect(html).not.toContain('y'.repeat(RESPONSE_BODY_SHOWN));
    expect(html).toContain('id="redeliver"');
  });
});

describe('policies pages', () => {
  it('lists each field\u2019s message under the editor, which keeps the typed text (escaped)', () => {
    const html = policyPage(viewer(), 'default', null, true, {
      draft: `{"merchants":{"blocked":"${XSS}"}}`,
      problem: { message: 'Invalid policy: merchants.blocked', issues: [{ field: 'merchants.blocked', message: 'must be an array of merchant ids' }] },
    });
    clean(html);
    expect(html).toContain('aria-describedby="err-policy-json"');
    expect(html).toContain('<ul class="field-error" id="err-policy-json"><li data-field="merchants.blocked"><code>merchants.blocked</code> must be an array of merchant ids</li></ul>');
    expect(html).toContain('<a href="#policy-json"><code>merchants.blocked</code>');
    expect(html).toContain('&#60;script&#62;');
  });

  it('a role without payments:write reads the document, with no editor', () => {
    const html = policyPage(viewer('viewer'), 'default', { policy_id: 'default', version: 3, policy_hash: 'h', policy: { purposes: { permitted: [XSS] } }, created_at: 'now' }, false);
    clean(html);
    expect(html).not.toContain('id="edit-policy"');
    expect(html).toContain('id="simulate"');
  });

  it('diffs the canonical pretty JSON by line: key order is no change', () => {
    expect(prettyPolicy({ b: 1, a: { d: 2, c: 3 } })).toBe('{\n  "a": {\n    "c": 3,\n    "d": 2\n  },\n  "b": 1\n}\n');
    expect(policyDiff({ b: 1, a: 2 }, { a: 2, b: 1 }).every((l) => l.kind === 'same')).toBe(true);
    const lines = policyDiff({ limits: { USD: { per_transaction_cents: 1 } } }, { limits: { USD: { per_transaction_cents: 2 } }, review: { approvals_required: 2 } });
    // Applying the diff to the old text gives the new one, and only the changed value and the new key are marked.
    expect(lines.filter((l) => l.kind !== 'added').map((l) => l.text).join('\n') + '\n').toBe(prettyPolicy({ limits: { USD: { per_transaction_cents: 1 } } }));
    expect(lines.filter((l) => l.kind !== 'removed').map((l) => l.text).join('\n') + '\n').toBe(prettyPolicy({ limits: { USD: { per_transaction_cents: 2 } }, review: { approvals_required: 2 } }));
    expect(lines.filter((l) => l.kind === 'removed').map((l) => l.text)).toEqual(['      "per_transaction_cents": 1']);
    expect(lines.filter((l) => l.kind === 'added').map((l) => l.text)).toEqual(['      "per_transaction_cents": 2', '  },', '  "review": {', '    "approvals_required": 2']);
    const html = versionsPage(viewer(), 'default', [
      { policy_id: 'default', version: 2, policy_hash: 'h2', policy: {}, created_at: 'b' },
      { policy_id: 'default', version: 1, policy_hash: 'h1', policy: {}, created_at: 'a' },
    ], { from: 1, to: 2 }, policyDiff({ m: XSS }, { m: 'ok' }));
    clean(html);
    expect(html).toContain('<del>-   &#34;m&#34;: &#34;&#60;script&#62;');
    expect(html).toContain('<ins>+   &#34;m&#34;: &#34;ok&#34;</ins>');
  });

  // No clock here (timing belongs in benchmarks): the bound is proven by the diff giving up, which
  // it does only once DIFF_MAX_EDIT_LENGTH (or the timeout) is reached; unbounded it would diff on.
  it('gives up on two large, wholly different policies, and shows both whole', () => {
    const big = (seed: string) => ({ rules: Array.from({ length: 3_000 }, (_, i) => ({ [`${seed}${i}`]: `${seed}-${i}` })) });
    const lines = policyDiff(big('a'), big('b'));
    expect(lines[0].kind).toBe('too_different');
    expect(lines.filter((l) => l.kind === 'removed').map((l) => l.text).join('\n') + '\n').toBe(prettyPolicy(big('a')));
    expect(lines.filter((l) => l.kind === 'added').map((l) => l.text).join('\n') + '\n').toBe(prettyPolicy(big('b')));
    const html = versionsPage(viewer(), 'default', [
      { policy_id: 'default', version: 2, policy_hash: 'h2', policy: {}, created_at: 'b' },
      { policy_id: 'default', version: 1, policy_hash: 'h1', policy: {}, created_at: 'a' },
    ], { from: 1, to: 2 }, policyDiff({ m: XSS, ...big('a') }, big('b')));
    expect(html).toContain('<p id="diff-too-different">The versions are too different to show line by line');
    expect(html).toContain('<del>-   &#34;m&#34;: &#34;&#60;script&#62;');
  });
});

describe('certificates pages', () => {
  it('escapes titles and ids; offers publishing for private certificates to a role that may', () => {
    const items = [{ id: 'c1', title: XSS, artifact_type: 'dataset', certificate_id: '00000000-0000-4000-8000-000000000001', artifact_hash: 'ab', visibility: 'private', created_at: 'now' }];
    const admin = certificatesPage(viewer(), { items, next_cursor: null }, { problem: { message: 'x', issues: [{ field: 'content', message: XSS }] }, draft: { content: XSS, artifact_type: 'output', visibility: 'private' } });
    clean(admin);
    expect(admin).toContain('action="/console/certificates/00000000-0000-4000-8000-000000000001/publish"');
    expect(admin).toContain('href="/verify/00000000-0000-4000-8000-000000000001"');
    expect(admin).toContain('enctype="multipart/form-data"');
    expect(admin).toContain('<p class="field-error" id="err-cert-content" data-field="content">&#60;script&#62;');
    const read = certificatesPage(viewer('viewer'), { items, next_cursor: null });
    expect(read).not.toContain('/publish"');
    expect(read).not.toContain('id="issue"');
    clean(issuedPage(viewer(), { certificate_id: XSS, dataset_hash: XSS, issued_at: XSS, signing_key_id: XSS }, 'private'));
  });
});
