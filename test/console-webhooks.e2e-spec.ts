import { AccessService } from '@app/access';
import { consoleClient, ConsoleClient, invitedPerson } from './support/console-client';
import { parsePrometheus, valueOf } from './support/prometheus-text';
import { isolatedEnv } from './support/isolated-env';
import { startTestApp, TestApp } from './support/test-app';
import { eventually, WebhookReceiver } from './support/webhook-receiver';

/**
 * The console's webhooks pages over HTTP (embedded, and PostgreSQL/Redis in the second pass): an
 * admin creates an endpoint (the secret once), edits its subscriptions, disables and enables it,
 * sends a test that fails at the receiver, reads the attempts (status and escaped body),
 * redelivers, recovers since a time, rotates the secret and deletes it; bad input is the form
 * again with its field's message (400), a form without its CSRF token 403, a viewer 403, and
 * another organization's endpoint or delivery the 404 page.
 */
const METRICS_TOKEN = 'console-webhooks-metrics-token';

describe('console webhooks pages (e2e)', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  let iso: Awaited<ReturnType<typeof isolatedEnv>>;
  let access: AccessService;

  beforeAll(async () => {
    iso = await isolatedEnv();
    receiver = await new WebhookReceiver().start();
    t = await startTestApp({ ...iso.env, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_TIMEOUT_MS: '3000', WEBHOOK_RETRY_SCHEDULE_MS: '50,100', RATE_LIMITS: 'off', METRICS_TOKEN: METRICS_TOKEN });
    access = t.app.get(AccessService);
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
    await iso?.dispose();
  });

  const person = (role: 'admin' | 'viewer', orgId?: string) => invitedPerson(t.app, access, role, orgId);

  const createEndpoint = async (b: ConsoleClient, url: string, events: string[] = ['authorization.requested']) => {
    const list = await b.send('GET', '/console/webhooks');
    const form: Record<string, string> = { csrf: b.csrf(list.body), url, description: 'console test' };
    for (const e of events) form[`event:${e}`] = 'on';
    const res = await b.send('POST', '/console/webhooks', form);
    expect(res.status).toBe(200);
    const id = /href="\/console\/webhooks\/(ep_[0-9a-f]{32})"/.exec(res.body)![1];
    const secret = /<code id="secret">([^<]+)<\/code>/.exec(res.body)![1];
    return { id, secret, page: res.body };
  };

  it('creates an endpoint (its secret once), edits, disables and enables it; bad input is the form with its field messages', async () => {
    const { b } = await person('admin');
    const list = await b.send('GET', '/console/webhooks');
    expect(list.status).toBe(200);
    expect(list.headers['content-security-policy']).toContain("script-src 'self'");
    const csrf = b.csrf(list.body);

    // No CSRF token: 403, and nothing is created.
    expect((await b.send('POST', '/console/webhooks', { url: receiver.route('x').url, 'event:receipt.issued': 'on' })).status).toBe(403);
    // Bad input: the form again, 400, each message beside its field, the typed values kept (escaped).
    const badUrl = await b.send('POST', '/console/webhooks', { csrf, url: 'not a url"><script>', description: '<b>desc</b>', 'event:receipt.issued': 'on' });
    expect(badUrl.status).toBe(400);
    expect(badUrl.body).toMatch(/<p class="field-error" id="err-ep-url" data-field="url">[^<]+<\/p>/);
    expect(badUrl.body).toContain('aria-describedby="err-ep-url"');
    expect(badUrl.body).toContain('value="not a url&#34;&#62;&#60;script&#62;"');
    expect(badUrl.body).toContain('value="&#60;b&#62;desc&#60;/b&#62;"');
    expect(badUrl.body).not.toContain('<script>');
    const noEvents = await b.send('POST', '/console/webhooks', { csrf, url: receiver.route('y').url });
    expect(noEvents.status).toBe(400);
    expect(noEvents.body).toMatch(/data-field="event_types">subscribe to at least one event type/);
    expect((await b.send('GET', '/console/webhooks')).body).toContain('No endpoint yet');

    const ep = await createEndpoint(b, receiver.route('ok').url, ['authorization.requested', 'receipt.issued']);
    expect(ep.secret).toMatch(/^whsec_/);
    expect(ep.page).toContain('not shown again');
    // The list shows it, never its secret.
    const after = await b.send('GET', '/console/webhooks');
    expect(after.body).toContain(`data-endpoint-id="${ep.id}"`);
    expect(after.body).not.toContain(ep.secret);

    // The create form sent again (a reload of its answer) makes no second endpoint, and shows no secret.
    const metric = async (name: string, labels: Record<string, string>) =>
      valueOf(parsePrometheus((await t.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).body), name, labels);
    const replays0 = await metric('sigil_idempotency_replays_total', { route: '/console/webhooks' });
    const reuses0 = await metric('sigil_idempotency_conflicts_total', { route: '/console/webhooks', reason: 'key_reused' });
    const form = await b.send('GET', '/console/webhooks');
    const formKey = /name="form_key" value="([0-9a-f-]{36})"/.exec(form.body)![1];
    const again = { csrf, form_key: formKey, url: receiver.route('again').url, 'event:receipt.issued': 'on' };
    const first = await b.send('POST', '/console/webhooks', again);
    expect(first.body).toMatch(/<code id="secret">whsec_/);
    const second = await b.send('POST', '/console/webhooks', again);
    expect(second.status).toBe(200);
    expect(second.body).toContain('This form was sent before');
    expect(second.body).not.toContain('whsec_');
    expect((await b.send('GET', '/console/webhooks')).body.match(/data-endpoint-id=/g)).toHaveLength(2);
    // The same form key with another URL: refused on the form (422), nothing made.
    const reused = await b.send('POST', '/console/webhooks', { ...again, url: receiver.route('other').url });
    expect(reused.status).toBe(422);
    expect(reused.body).toContain('already used');
    expect((await b.send('GET', '/console/webhooks')).body.match(/data-endpoint-id=/g)).toHaveLength(2);
    // Counted as the API's are: one replay, one reused key.
    expect(await metric('sigil_idempotency_replays_total', { route: '/console/webhooks' })).toBe(replays0 + 1);
    expect(await metric('sigil_idempotency_conflicts_total', { route: '/console/webhooks', reason: 'key_reused' })).toBe(reuses0 + 1);

    // Edit subscriptions.
    const page = await b.send('GET', `/console/webhooks/${ep.id}`);
    expect(page.status).toBe(200);
    expect(page.body).not.toContain(ep.secret);
    const saved = await b.send('POST', `/console/webhooks/${ep.id}`, { csrf, url: receiver.route('ok2').url, description: '', 'event:execution.failed': 'on' });
    expect(saved).toMatchObject({ status: 303, headers: { location: `/console/webhooks/${ep.id}?done=saved` } });
    const edited = await b.send('GET', `/console/webhooks/${ep.id}?done=saved`);
    expect(edited.body).toContain('The endpoint is saved.');
    expect(edited.body).toMatch(/name="event:execution\.failed" value="on" checked/);
    expect(edited.body).not.toMatch(/name="event:receipt\.issued" value="on" checked/);
    const badEdit = await b.send('POST', `/console/webhooks/${ep.id}`, { csrf, url: 'ftp://example.com/x', 'event:execution.failed': 'on' });
    expect(badEdit.status).toBe(400);
    expect(badEdit.body).toContain('data-field="url"');

    // Disable, then enable.
    expect((await b.send('POST', `/console/webhooks/${ep.id}/disable`, { csrf })).status).toBe(303);
    expect((await b.send('GET', `/console/webhooks/${ep.id}`)).body).toMatch(/id="endpoint-state">Disabled/);
    expect((await b.send('POST', `/console/webhooks/${ep.id}/enable`, { csrf })).status).toBe(303);
    expect((await b.send('GET', `/console/webhooks/${ep.id}`)).body).toMatch(/id="endpoint-state">Enabled/);

    // Rotate: a new secret, once.
    const rotated = await b.send('POST', `/console/webhooks/${ep.id}/rotate-secret`, { csrf });
    expect(rotated.status).toBe(200);
    const secret2 = /<code id="secret">([^<]+)<\/code>/.exec(rotated.body)![1];
    expect(secret2).toMatch(/^whsec_/);
    expect(secret2).not.toBe(ep.secret);
    expect(rotated.body).toContain('previous secret keeps signing');

    // An unknown action, a malformed id: the 404 page.
    expect((await b.send('POST', `/console/webhooks/${ep.id}/explode`, { csrf })).status).toBe(404);
    expect((await b.send('GET', '/console/webhooks/ep_nope')).status).toBe(404);
    // A cursor this service did not issue: 400, said on the page.
    const badCursor = await b.send('GET', `/console/webhooks/${ep.id}?cursor=garbage`);
    expect(badCursor.status).toBe(400);
    expect(badCursor.body).toContain('cursor is not one this service issued');

    // Delete: gone from the list, its page 404.
    expect(await b.send('POST', `/console/webhooks/${ep.id}/delete`, { csrf })).toMatchObject({ status: 303, headers: { location: '/console/webhooks?done=deleted' } });
    expect((await b.send('GET', `/console/webhooks/${ep.id}`)).status).toBe(404);
  });

  it("another person of the organization sending someone's form key again is refused (422), not answered with that person's creation", async () => {
    const { b: alice, orgId } = await person('admin');
    const { b: bob } = await person('admin', orgId);
    const form = await alice.send('GET', '/console/webhooks');
    const formKey = /name="form_key" value="([0-9a-f-]{36})"/.exec(form.body)![1];
    const fields = { form_key: formKey, url: receiver.route('shared-form').url, 'event:receipt.issued': 'on' };
    const first = await alice.send('POST', '/console/webhooks', { ...fields, csrf: alice.csrf(form.body) });
    expect(first.body).toMatch(/<code id="secret">whsec_/);
    const bobs = await bob.send('POST', '/console/webhooks', { ...fields, csrf: bob.csrf((await bob.send('GET', '/console/webhooks')).body) });
    expect(bobs.status).toBe(422);
    expect(bobs.body).toContain('already used');
    expect(bobs.body).not.toContain('This form was sent before');
    expect((await alice.send('GET', '/console/webhooks')).body.match(/data-endpoint-id=/g)).toHaveLength(1);
    // Alice's own resend is still the repeat it was.
    const again = await alice.send('POST', '/console/webhooks', { ...fields, csrf: alice.csrf(form.body) });
    expect([again.status, again.body.includes('This form was sent before')]).toEqual([200, true]);
  });

  it('a test ping that fails shows its attempts (codes, escaped bodies); redeliver and recover start new series; bad since is the form with its message', async () => {
    const { b } = await person('admin');
    const route = receiver.route('down', () => ({ status: 500, headers: { 'content-type': 'text/html' }, body: `<script>alert(1)</script>${'x'.repeat(3000)}` }));
    const ep = await createEndpoint(b, route.url);
    const csrf = b.csrf((await b.send('GET', `/console/webhooks/${ep.id}`)).body);
    expect(await b.send('POST', `/console/webhooks/${ep.id}/test`, { csrf })).toMatchObject({ status: 303, headers: { location: `/console/webhooks/${ep.id}?done=test` } });

    const deliveryId = await eventually(async () => {
      const page = await b.send('GET', `/console/webhooks/${ep.id}?status=failed`);
      return /data-delivery-id="(dlv_[0-9a-f]{32})"/.exec(page.body)?.[1];
    }, 20_000, 'the test delivery to fail');
    const delivery = await b.send('GET', `/console/webhooks/deliveries/${deliveryId}`);
    expect(delivery.status).toBe(200);
    expect(delivery.body).toMatch(/id="delivery-status">failed/);
    expect(delivery.body.match(/<dd class="status-code">500<\/dd>/g)?.length).toBe(3);
    // The receiver's body, escaped and cut short.
    expect(delivery.body).toContain('&#60;script&#62;alert(1)&#60;/script&#62;');
    expect(delivery.body).not.toContain('<script>alert');
    expect(delivery.body).toMatch(/more characters not shown/);

    // Redeliver: a new series; no CSRF is 403.
    expect((await b.send('POST', `/console/webhooks/deliveries/${deliveryId}/redeliver`, {})).status).toBe(403);
    expect(await b.send('POST', `/console/webhooks/deliveries/${deliveryId}/redeliver`, { csrf })).toMatchObject({
      status: 303,
      headers: { location: `/console/webhooks/deliveries/${deliveryId}?done=redelivered` },
    });
    await eventually(async () => receiver.on(route.path).length >= 4, 20_000, 'the redelivery to reach the receiver');
    await eventually(async () => /id="delivery-status">failed/.test((await b.send('GET', `/console/webhooks/deliveries/${deliveryId}`)).body), 20_000, 'the second series to fail');
    expect((await b.send('GET', `/console/webhooks/deliveries/${deliveryId}`)).body).toContain('(series 2)');

    // Recover since a time: a bad one is the form with its message; a good one re-sends the failed delivery.
    const bad = await b.send('POST', `/console/webhooks/${ep.id}/recover`, { csrf, since: 'yesterday' });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatch(/data-field="since">since must be an ISO-8601 date-time/);
    expect(bad.body).toContain('value="yesterday"');
    const recovered = await b.send('POST', `/console/webhooks/${ep.id}/recover`, { csrf, since: new Date(Date.now() - 3600_000).toISOString() });
    expect(recovered.status).toBe(200);
    expect(recovered.body).toContain('1 failed delivery is being sent again.');
    await eventually(async () => receiver.on(route.path).length >= 7, 20_000, 'the recovery to reach the receiver');
  });

  it('another organization\u2019s endpoint and delivery are the 404 page; a viewer is refused (403) on every page and form', async () => {
    const a = await person('admin');
    const other = await person('admin');
    const route = receiver.route('other', () => ({ status: 503 }));
    const ep = await createEndpoint(a.b, route.url);
    const csrfA = a.b.csrf((await a.b.send('GET', `/console/webhooks/${ep.id}`)).body);
    await a.b.send('POST', `/console/webhooks/${ep.id}/test`, { csrf: csrfA });
    const deliveryId = await eventually(async () => /data-delivery-id="(dlv_[0-9a-f]{32})"/.exec((await a.b.send('GET', `/console/webhooks/${ep.id}`)).body)?.[1], 20_000, 'a delivery');

    const csrf = other.b.csrf((await other.b.send('GET', '/console/webhooks')).body);
    for (const [m, u] of [
      ['GET', `/console/webhooks/${ep.id}`],
      ['POST', `/console/webhooks/${ep.id}`],
      ['POST', `/console/webhooks/${ep.id}/test`],
      ['POST', `/console/webhooks/${ep.id}/rotate-secret`],
      ['POST', `/console/webhooks/${ep.id}/disable`],
      ['POST', `/console/webhooks/${ep.id}/delete`],
      ['POST', `/console/webhooks/${ep.id}/recover`],
      ['GET', `/console/webhooks/deliveries/${deliveryId}`],
      ['POST', `/console/webhooks/deliveries/${deliveryId}/redeliver`],
    ] as const) {
      const res = await other.b.send(m, u, m === 'POST' ? { csrf, url: route.url, since: new Date().toISOString(), 'event:receipt.issued': 'on' } : undefined);
      expect([m, u, res.status]).toEqual([m, u, 404]);
      expect(res.body).toContain('belongs to another organization');
    }
    // Nothing changed for its owner.
    expect((await a.b.send('GET', `/console/webhooks/${ep.id}`)).body).toMatch(/id="endpoint-state">Enabled/);

    // A viewer (no webhooks:manage) is refused, with the reason, on pages and forms alike.
    const viewer = await person('viewer', a.orgId);
    const refused = await viewer.b.send('GET', '/console/webhooks');
    expect(refused.status).toBe(403);
    expect(refused.body).toContain('needs the scope webhooks:manage');
    const vcsrf = viewer.b.csrf((await viewer.b.send('GET', '/console/account')).body);
    expect((await viewer.b.send('POST', '/console/webhooks', { csrf: vcsrf, url: route.url, 'event:receipt.issued': 'on' })).status).toBe(403);
    expect((await viewer.b.send('POST', `/console/webhooks/${ep.id}/delete`, { csrf: vcsrf })).status).toBe(403);
    expect((await a.b.send('GET', `/console/webhooks/${ep.id}`)).status).toBe(200);
    // Signed out: to the sign-in page.
    expect(await consoleClient(t.app).send('GET', '/console/webhooks')).toMatchObject({ status: 303, headers: { location: '/console/sign-in' } });
  });
});
