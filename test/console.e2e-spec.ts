import { randomBytes } from 'node:crypto';
import { AccessService, SCOPES } from '@app/access';
import { verifyTimeline } from '@app/sdk';
import { startTestApp, TestApp } from './support/test-app';

/**
 * The console over HTTP (embedded, and PostgreSQL/Redis in the second pass): people and sessions
 * through /api/users and /api/sessions, and the server-rendered /console pages: sign in by link
 * and by password, CSRF on every form, approve and reject with the API's own commands, the
 * transactions list and timeline, another organization's ids as the 404 page, and a role
 * without the scope refused.
 */
describe('console (e2e)', () => {
  let t: TestApp;
  let access: AccessService;

  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMITS: 'off' });
    access = t.app.get(AccessService);
  }, 60_000);
  afterAll(async () => {
    await t?.close();
  });

  type Json = Record<string, unknown>;
  const api = async (method: 'GET' | 'POST' | 'PATCH' | 'DELETE' | 'PUT', url: string, key: string, payload?: unknown) => {
    const res = await t.app.inject({ method, url, ...(payload === undefined ? {} : { payload: payload as object }), headers: { authorization: `Bearer ${key}` } });
    return { status: res.statusCode, body: res.body ? (res.json() as Json) : {} };
  };

  const org = async () => {
    const o = await access.createOrganization(`console-${randomBytes(3).toString('hex')}`);
    const admin = await access.createApiKey(o.org_id, { scopes: [...SCOPES], mode: 'test' });
    const agent = await access.createApiKey(o.org_id, { scopes: ['payments:write', 'payments:read'], mode: 'test' });
    return { orgId: o.org_id, admin: admin.key, agent: agent.key };
  };
  const email = (who: string) => `${who}-${randomBytes(4).toString('hex')}@example.com`;

  /** A browser of one: its cookies, kept between requests. */
  const browser = () => {
    const jar = new Map<string, string>();
    const send = async (method: 'GET' | 'POST', url: string, form?: Record<string, string>) => {
      const res = await t.app.inject({
        method,
        url,
        headers: { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; '), ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
        ...(form ? { payload: new URLSearchParams(form).toString() } : {}),
      });
      const set = res.headers['set-cookie'];
      for (const c of (Array.isArray(set) ? set : set ? [set] : []) as string[]) {
        const [pair] = c.split(';');
        const [name, value] = [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)];
        if (/Max-Age=0/.test(c)) jar.delete(name);
        else jar.set(name, value);
      }
      return { status: res.statusCode, body: res.body, headers: res.headers };
    };
    const csrf = (html: string) => /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';
    return { jar, send, csrf };
  };

  const signInByLink = async (url: string) => {
    const b = browser();
    const path = new URL(url).pathname + new URL(url).search;
    const page = await b.send('GET', path);
    expect(page.status).toBe(200);
    const token = new URL(url).searchParams.get('token')!;
    const res = await b.send('POST', '/console/sign-in/link', { csrf: b.csrf(page.body), token });
    expect(res).toMatchObject({ status: 303, headers: { location: '/console/approvals' } });
    return b;
  };

  const invite = async (o: { admin: string }, role: string, who = role) => {
    const res = await api('POST', '/api/users', o.admin, { email: email(who), display_name: `${who} person`, role });
    expect(res.status).toBe(201);
    return res.body as { url: string; user: { user_id: string; email: string } };
  };

  const escalate = async (agent: string, amount = 30_000) => {
    const d = (await api('POST', '/api/cdp/authorize', agent, { amount_cents: amount, currency: 'USD', merchant_id: 'm_hotel', purpose_tag: 'travel', expiration_iso: new Date(Date.now() + 3600_000).toISOString() })).body;
    expect(d.decision).toBe('needs_review');
    return d as { transaction_id: string; authorization_id: string };
  };

  it('invites people over the API (a one-time link), lists, reads and changes them; bad input is 400, another organization 404', async () => {
    const a = await org();
    const b = await org();
    const invited = await invite(a, 'reviewer');
    expect(invited).toMatchObject({ link_id: expect.stringMatching(/^lnk_/), url: expect.stringMatching(/\/console\/sign-in\/link\?token=sgl_[0-9a-f]{64}$/), user: { role: 'reviewer', has_password: false, invited_by: expect.stringMatching(/^api_key:/) } });
    const id = invited.user.user_id;
    expect((await api('GET', '/api/users', a.admin)).body.users).toEqual([expect.objectContaining({ user_id: id })]);
    expect((await api('PATCH', `/api/users/${id}`, a.admin, { role: 'viewer' })).body).toMatchObject({ role: 'viewer' });
    expect((await api('GET', `/api/users/${id}`, a.admin)).body).toMatchObject({ role: 'viewer' });
    expect((await api('POST', `/api/users/${id}/sign-in-links`, a.admin)).status).toBe(201);

    // Another organization's user is not found, whatever the call.
    for (const [m, u, p] of [['GET', `/api/users/${id}`], ['PATCH', `/api/users/${id}`, { role: 'admin' }], ['POST', `/api/users/${id}/sign-in-links`]] as const) {
      expect(await api(m, u, b.admin, p)).toMatchObject({ status: 404, body: { error: 'not_found' } });
    }
    // Bad input.
    expect(await api('POST', '/api/users', a.admin, { email: 'not-an-email', display_name: 'x', role: 'viewer' })).toMatchObject({ status: 400, body: { error: 'validation_failed' } });
    expect(await api('POST', '/api/users', a.admin, { email: email('x'), display_name: 'x', role: 'emperor' })).toMatchObject({ status: 400, body: { error: 'validation_failed' } });
    expect(await api('POST', '/api/users', a.admin, { email: email('x'), display_name: '', role: 'viewer' })).toMatchObject({ status: 400, body: { error: 'validation_failed' } });
    expect(await api('POST', '/api/users', a.admin, { email: email('x'), display_name: 'x', role: 'viewer', extra: 1 })).toMatchObject({ status: 400, body: { error: 'validation_failed' } });
    expect(await api('GET', '/api/users/usr_nope', a.admin)).toMatchObject({ status: 400, body: { error: 'validation_failed' } });
    expect(await api('PATCH', `/api/users/${id}`, a.admin, {})).toMatchObject({ status: 400, body: { error: 'validation_failed' } });
    // One address, one user of an organization: again there is 409; another organization's people change no answer.
    expect(await api('POST', '/api/users', a.admin, { email: invited.user.email.toUpperCase(), display_name: 'Again', role: 'viewer' })).toMatchObject({ status: 409, body: { error: 'email_taken' } });
    expect(await api('POST', '/api/users', b.admin, { email: invited.user.email.toUpperCase(), display_name: 'Elsewhere', role: 'viewer' })).toMatchObject({ status: 201, body: { user: { email: invited.user.email } } });
    // A key makes no owners.
    expect(await api('POST', '/api/users', a.admin, { email: email('o'), display_name: 'Owner', role: 'owner' })).toMatchObject({ status: 403, body: { error: 'owner_role_required' } });
    // A key gives only roles whose scopes it holds (a users:manage key alone makes no admins, nor even viewers).
    const narrow = await access.createApiKey(a.orgId, { scopes: ['users:manage', 'payments:read', 'receipts:read'], mode: 'test' });
    expect(await api('POST', '/api/users', narrow.key, { email: email('v'), display_name: 'V', role: 'viewer' })).toMatchObject({ status: 201 });
    expect(await api('POST', '/api/users', narrow.key, { email: email('r'), display_name: 'R', role: 'admin' })).toMatchObject({ status: 403, body: { error: 'insufficient_scope', details: { missing_scopes: expect.arrayContaining(['keys:manage', 'approvals:manage']) } } });
    expect(await api('PATCH', `/api/users/${id}`, narrow.key, { role: 'admin' })).toMatchObject({ status: 403, body: { error: 'insufficient_scope' } });
    // users:manage is needed.
    expect(await api('GET', '/api/users', a.agent)).toMatchObject({ status: 403, body: { error: 'insufficient_scope' } });
  });

  it('signs in by a one-time link (once), sets a password, signs in with it; sessions list and revoke at once; sign-out ends the session', async () => {
    const a = await org();
    const invited = await invite(a, 'viewer');
    const b = await signInByLink(invited.url);
    expect(b.jar.get('sigil_session')).toMatch(/^sgs_[0-9a-f]{64}$/);

    // The link is used up.
    const again = browser();
    const form = await again.send('GET', '/console/sign-in');
    const reused = await again.send('POST', '/console/sign-in/link', { csrf: again.csrf(form.body), token: new URL(invited.url).searchParams.get('token')! });
    expect(reused.status).toBe(401);
    expect(reused.body).toContain('invalid, used or expired');

    // The session cookie's attributes.
    const fresh = await invite(a, 'viewer', 'cookie');
    const c = browser();
    const p = await c.send('GET', new URL(fresh.url).pathname + new URL(fresh.url).search);
    const signedIn = await c.send('POST', '/console/sign-in/link', { csrf: c.csrf(p.body), token: new URL(fresh.url).searchParams.get('token')! });
    const setCookie = String(([] as string[]).concat(signedIn.headers['set-cookie'] as string[])[0]);
    expect(setCookie).toMatch(/^sigil_session=sgs_[0-9a-f]{64}; Path=\/console; Max-Age=43200; HttpOnly; SameSite=Strict$/);

    // A password, then a password sign-in.
    const account = await b.send('GET', '/console/account');
    expect(account.status).toBe(200);
    expect((await b.send('POST', '/console/account/password', { csrf: b.csrf(account.body), password: 'short' })).status).toBe(400);
    expect((await b.send('POST', '/console/account/password', { password: 'correct horse battery staple' })).status).toBe(403);
    expect(await b.send('POST', '/console/account/password', { csrf: b.csrf(account.body), password: 'correct horse battery staple' })).toMatchObject({ status: 303 });
    const d = browser();
    const signIn = await d.send('GET', '/console/sign-in');
    expect((await d.send('POST', '/console/sign-in', { csrf: d.csrf(signIn.body), email: invited.user.email, password: 'wrong password here' })).status).toBe(401);
    expect((await d.send('POST', '/console/sign-in', { csrf: 'forged', email: invited.user.email, password: 'correct horse battery staple' })).status).toBe(403);
    expect((await d.send('POST', '/console/sign-in', { csrf: d.csrf(signIn.body), email: invited.user.email, password: 'correct horse battery staple' })).status).toBe(303);

    // Sessions over the API: listed (never a token), revoked at once.
    const sessions = (await api('GET', `/api/sessions?user_id=${invited.user.user_id}`, a.admin)).body.sessions as { session_id: string; method: string; status: string }[];
    expect(sessions.map((s) => [s.method, s.status]).sort()).toEqual([['link', 'active'], ['password', 'active']]);
    expect(JSON.stringify(sessions)).not.toMatch(/sgs_|token/);
    const linkSession = sessions.find((s) => s.method === 'link')!;
    expect((await api('DELETE', `/api/sessions/${linkSession.session_id}`, a.admin)).body).toMatchObject({ status: 'revoked' });
    expect(await b.send('GET', '/console/transactions')).toMatchObject({ status: 303, headers: { location: '/console/sign-in' } });
    expect((await d.send('GET', '/console/transactions')).status).toBe(200);
    expect(await api('DELETE', '/api/sessions/ses_000000000000000000000000', a.admin)).toMatchObject({ status: 404, body: { error: 'not_found' } });
    expect(await api('DELETE', '/api/sessions/nope', a.admin)).toMatchObject({ status: 400, body: { error: 'validation_failed' } });
    const other = await org();
    expect(await api('DELETE', `/api/sessions/${sessions[0].session_id}`, other.admin)).toMatchObject({ status: 404 });

    // Sign-out: needs the form's token, then the cookie no longer works.
    const page = await d.send('GET', '/console/account');
    expect((await d.send('POST', '/console/sign-out', { csrf: 'x' })).status).toBe(403);
    expect(await d.send('POST', '/console/sign-out', { csrf: d.csrf(page.body) })).toMatchObject({ status: 303, headers: { location: '/console/sign-in' } });
    expect((await d.send('GET', '/console/account')).status).toBe(303);
  });

  it('serves pages under a strict CSP, with every value escaped; forms are taken on /console only (the API stays JSON-only)', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/console/sign-in' });
    expect(res.statusCode).toBe(200);
    const csp = String(res.headers['content-security-policy']);
    expect(csp).toMatch(/^default-src 'none'; script-src 'self'; style-src 'self';/);
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|https?:/);
    expect(res.body).not.toMatch(/<script>|style="/);
    const link = await t.app.inject({ method: 'GET', url: '/console/sign-in/link?token=%22%3E%3Cscript%3Ealert(1)%3C%2Fscript%3E' });
    expect(link.body).not.toContain('<script>alert');
    expect(link.body).toContain('&#34;&#62;&#60;script&#62;');
    const form = await t.app.inject({ method: 'POST', url: '/api/cdp/authorize', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'a=b' });
    expect(form.statusCode).toBe(415);
    expect(form.json()).toMatchObject({ error: 'unsupported_media_type' });
    // A form field holding U+0000 (PostgreSQL text cannot keep it) is refused before any page runs.
    const nul = await t.app.inject({ method: 'POST', url: '/console/sign-in/password', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'email=a%00b%40example.com&password=x' });
    expect([nul.statusCode, nul.headers['content-type']]).toEqual([400, 'text/html; charset=utf-8']);
    expect(nul.body).toContain('A form field holds U+0000, which no field may contain');
    expect((await t.app.inject({ method: 'GET', url: '/console/transactions' })).headers.location).toBe('/console/sign-in');
  });

  it('a reviewer approves one payment (lower amount) and rejects another through the console, signed as themselves; a viewer is refused; another organization\u2019s ids are the 404 page', async () => {
    const a = await org();
    const owner = await access.createApiKey(a.orgId, { scopes: ['payments:write', 'payments:read'], mode: 'test' });
    expect((await api('PUT', '/api/cdp/policies/default', owner.key, { limits: { USD: { per_transaction_cents: 50_000, review_above_cents: 20_000 } } })).status).toBe(200);
    const one = await escalate(a.agent, 30_000);
    const two = await escalate(a.agent, 40_000);
    const reviewer = await invite(a, 'reviewer');
    const b = await signInByLink(reviewer.url);

    const queue = await b.send('GET', '/console/approvals');
    expect(queue.status).toBe(200);
    expect(queue.body).toContain('300.00 USD to m_hotel');
    expect(queue.body).toContain('review_threshold: 30000 above the review threshold 20000 USD');
    expect(queue.body).toContain(`data-authorization-id="${one.authorization_id}"`);
    const csrf = b.csrf(queue.body);

    expect((await b.send('POST', `/console/approvals/${one.authorization_id}/approve`, { csrf: 'nope', currency: 'USD', amount: '250', note: 'x' })).status).toBe(403);
    expect((await b.send('POST', `/console/approvals/${one.authorization_id}/approve`, { csrf, currency: 'USD', amount: '2.505', note: '' })).status).toBe(400);
    expect((await b.send('POST', `/console/approvals/${one.authorization_id}/approve`, { csrf, currency: 'USD', amount: '400', note: '' })).status).toBe(400);
    expect(await b.send('POST', `/console/approvals/${one.authorization_id}/approve`, { csrf, currency: 'USD', amount: '250', note: 'within budget' })).toMatchObject({ status: 303, headers: { location: '/console/approvals?done=approved' } });
    expect(await b.send('POST', `/console/approvals/${two.authorization_id}/reject`, { csrf, note: 'not this vendor' })).toMatchObject({ status: 303 });
    const again = await b.send('POST', `/console/approvals/${two.authorization_id}/reject`, { csrf, note: 'twice' });
    expect(again.status).toBe(409);
    expect(again.body).toContain('Already decided');

    // The API sees the same outcome; the review names the person.
    expect((await api('GET', `/api/cdp/transactions/${one.transaction_id}`, a.agent)).body).toMatchObject({ status: 'authorized', approved_amount_cents: 25_000 });
    expect((await api('GET', `/api/cdp/transactions/${two.transaction_id}`, a.agent)).body).toMatchObject({ status: 'rejected' });
    const record = (await api('GET', `/api/cdp/transactions/${one.transaction_id}/decision`, a.agent)).body as { reviews: { payload: { reviewer: { actor: string } } }[] };
    expect(record.reviews[0].payload.reviewer).toEqual({ actor: `user:${reviewer.user.user_id}`, key_id: null, name: 'reviewer person' });

    // The timeline page.
    const timeline = await b.send('GET', `/console/transactions/${one.transaction_id}`);
    expect(timeline.status).toBe(200);
    expect(timeline.body).toContain('id="chain-verdict" class="verdict valid"');
    expect(timeline.body).toContain('authorization.human_approved');
    expect(timeline.body).toContain('within budget');
    // The timeline as a file, which the SDK (and so `sigil timeline verify`) checks offline; no receipt before execution.
    const file = await b.send('GET', `/console/transactions/${one.transaction_id}/timeline.json`);
    expect(file.status).toBe(200);
    expect(file.headers['content-disposition']).toBe(`attachment; filename="timeline-${one.transaction_id}.json"`);
    const keys = (await t.app.inject({ method: 'GET', url: '/.well-known/signing-keys.json' })).json();
    expect(verifyTimeline(JSON.parse(file.body), { keys })).toMatchObject({ valid: true, events: expect.any(Number) });
    expect(timeline.body).toContain(`href="/console/transactions/${one.transaction_id}/timeline.json"`);
    expect((await b.send('GET', `/console/transactions/${one.transaction_id}/receipt.json`)).status).toBe(404);
    expect((await b.send('GET', `/console/transactions/${one.transaction_id}/other.json`)).status).toBe(404);
    expect((await api('POST', `/api/cdp/transactions/${one.transaction_id}/execute`, a.agent)).body).toMatchObject({ outcome: 'succeeded' });
    const receipt = await b.send('GET', `/console/transactions/${one.transaction_id}/receipt.json`);
    expect(receipt.status).toBe(200);
    expect(JSON.parse(receipt.body)).toMatchObject({ schema_version: 'payment_receipt.v1', payload: { transaction_id: one.transaction_id } });
    expect((await b.send('GET', `/console/transactions/${one.transaction_id}`)).body).toContain(`--receipt receipt-${one.transaction_id}.json`);
    const list = await b.send('GET', '/console/transactions?status=rejected');
    expect(list.body).toContain(two.transaction_id);
    expect(list.body).not.toContain(one.transaction_id);
    expect((await b.send('GET', '/console/transactions?status=bogus')).status).toBe(400);
    expect((await b.send('GET', '/console/transactions?from=yesterday')).status).toBe(400);

    // Another organization's ids: the 404 page, for the timeline and for a review.
    const other = await org();
    const foreign = await escalate(other.agent, 10_000).catch(() => null);
    const otherTx = foreign?.transaction_id ?? (await api('POST', '/api/cdp/authorize', other.agent, { amount_cents: 100, currency: 'USD', merchant_id: 'm', purpose_tag: 'p', expiration_iso: new Date(Date.now() + 3600_000).toISOString() })).body.transaction_id;
    const nf = await b.send('GET', `/console/transactions/${otherTx}`);
    expect(nf.status).toBe(404);
    expect(nf.body).toContain('<h1>Not found</h1>');
    expect((await b.send('GET', '/console/transactions/not-an-id')).status).toBe(404);
    expect((await b.send('GET', `/console/transactions/${otherTx}/timeline.json`)).status).toBe(404);

    // A viewer sees transactions but may not review.
    const viewer = await signInByLink((await invite(a, 'viewer')).url);
    const three = await escalate(a.agent, 30_000);
    const vq = await viewer.send('GET', '/console/approvals');
    expect(vq.body).not.toContain('/approve"');
    const refused = await viewer.send('POST', `/console/approvals/${three.authorization_id}/approve`, { csrf: viewer.csrf(vq.body), currency: 'USD' });
    expect(refused.status).toBe(403);
    expect(refused.body).toContain('Your role (viewer) cannot review payments');
    expect((await api('GET', `/api/cdp/transactions/${three.transaction_id}`, a.agent)).body).toMatchObject({ status: 'needs_review' });
  });

  it('keys page: an admin creates a key (shown once) that works at once, and revokes it: the API refuses it at once; a viewer is refused; a foreign key is 404', async () => {
    const a = await org();
    const admin = await signInByLink((await invite(a, 'admin')).url);
    const page = await admin.send('GET', '/console/keys');
    expect(page.status).toBe(200);
    // The authority's signing keys and their status (rotation stays an operator's CLI action).
    const [published] = ((await t.app.inject({ method: 'GET', url: '/.well-known/signing-keys.json' })).json() as { keys: { key_id: string; status: string }[] }).keys.filter((k) => k.status === 'active');
    expect(page.body).toContain(`data-signing-key-id="${published.key_id}"><td><code>${published.key_id}</code></td><td class="status">active</td>`);
    const csrf = admin.csrf(page.body);
    expect((await admin.send('POST', '/console/keys', { csrf, mode: 'test' })).status).toBe(400);
    expect((await admin.send('POST', '/console/keys', { csrf: 'x', mode: 'test', scope_payments_read: 'on' })).status).toBe(403);
    const made = await admin.send('POST', '/console/keys', { csrf, mode: 'live', name: 'reporting <1>', scope_payments_read: 'on' });
    expect(made.status).toBe(201);
    const secret = /id="new-key-secret">(cdp_live_[0-9a-f]{64})</.exec(made.body)![1];
    expect(made.body).toContain('reporting &#60;1&#62;');
    const me = await api('GET', '/api/me', secret);
    expect(me).toMatchObject({ status: 200, body: { scopes: ['payments:read'], mode: 'live' } });
    expect((await admin.send('GET', '/console/keys')).body).not.toContain(secret);

    const keyId = me.body.key_id as string;
    // The person who made it is recorded (the review rules count the key as that person).
    const adminId = /user:(usr_[0-9a-f]+)/.exec(String(((await access.listApiKeys(a.orgId)) as { key_id: string; created_by?: string | null }[]).find((k) => k.key_id === keyId)?.created_by))?.[1];
    expect(adminId).toBeDefined();
    expect(await admin.send('POST', `/console/keys/${keyId}/revoke`, { csrf })).toMatchObject({ status: 303, headers: { location: '/console/keys?done=revoked' } });
    expect(await api('GET', '/api/me', secret)).toMatchObject({ status: 401, body: { error: 'auth_required' } });

    const other = await org();
    const foreign = await access.createApiKey(other.orgId, { scopes: ['payments:read'], mode: 'test' });
    expect((await admin.send('POST', `/console/keys/${foreign.key_id}/revoke`, { csrf })).status).toBe(404);
    expect(await api('GET', '/api/me', foreign.key)).toMatchObject({ status: 200 });
    expect((await admin.send('POST', '/console/keys/nope/revoke', { csrf })).status).toBe(404);

    const viewer = await signInByLink((await invite(a, 'viewer')).url);
    const refused = await viewer.send('GET', '/console/keys');
    expect(refused.status).toBe(403);
    expect(refused.body).toContain('cannot manage API keys');
  });

  it('people page: an admin invites (the link shown once), changes a role, ends someone’s session; no owners by admins; foreign ids 404; a reviewer is refused', async () => {
    const a = await org();
    const admin = await signInByLink((await invite(a, 'admin')).url);
    const page = await admin.send('GET', '/console/people');
    expect(page.status).toBe(200);
    expect(page.body).not.toContain('<option value="owner"');
    const csrf = admin.csrf(page.body);
    const who = email('new');
    const invited = await admin.send('POST', '/console/people', { csrf, email: who, display_name: 'New <Person>', role: 'reviewer' });
    expect(invited.status).toBe(201);
    expect(invited.body).toContain('New &#60;Person&#62;');
    const url = /id="invite-link">([^<]+)</.exec(invited.body)![1];
    expect((await admin.send('POST', '/console/people', { csrf, email: email('o'), display_name: 'O', role: 'owner' })).status).toBe(403);
    expect((await admin.send('POST', '/console/people', { csrf, email: 'bad', display_name: 'O', role: 'viewer' })).status).toBe(400);
    expect((await admin.send('POST', '/console/people', { csrf: 'x', email: email('c'), display_name: 'C', role: 'viewer' })).status).toBe(403);

    const person = await signInByLink(url.replace(/&#38;/g, '&'));
    const users = (await api('GET', '/api/users', a.admin)).body.users as { user_id: string; email: string }[];
    const id = users.find((u) => u.email === who)!.user_id;
    expect(await admin.send('POST', `/console/people/${id}/role`, { csrf, role: 'viewer' })).toMatchObject({ status: 303, headers: { location: '/console/people?done=role' } });
    expect((await api('GET', `/api/users/${id}`, a.admin)).body).toMatchObject({ role: 'viewer' });
    expect((await person.send('GET', '/console/people')).status).toBe(403);

    const sessions = (await api('GET', `/api/sessions?user_id=${id}`, a.admin)).body.sessions as { session_id: string }[];
    expect(await admin.send('POST', `/console/people/sessions/${sessions[0].session_id}/revoke`, { csrf })).toMatchObject({ status: 303 });
    expect(await person.send('GET', '/console/transactions')).toMatchObject({ status: 303, headers: { location: '/console/sign-in' } });

    const other = await org();
    const foreign = await invite(other, 'viewer');
    expect((await admin.send('POST', `/console/people/${foreign.user.user_id}/role`, { csrf, role: 'admin' })).status).toBe(404);
    expect((await admin.send('POST', '/console/people/usr_x/role', { csrf, role: 'admin' })).status).toBe(404);
    expect((await admin.send('POST', '/console/people/sessions/ses_000000000000000000000000/revoke', { csrf })).status).toBe(404);
  });

  it('forms only: a JSON body to a console form is a 415 page before it is read (it skipped the form parser\u2019s U+0000 check: a key named with U+0000 was a 500)', async () => {
    const a = await org();
    const admin = await signInByLink((await invite(a, 'admin')).url);
    const csrf = admin.csrf((await admin.send('GET', '/console/keys')).body);
    const cookie = [...admin.jar].map(([k, v]) => `${k}=${v}`).join('; ');
    const json = (url: string, payload: unknown, type = 'application/json') => t.app.inject({ method: 'POST', url, headers: { cookie, 'content-type': type }, payload: JSON.stringify(payload) });
    for (const [url, payload] of [
      ['/console/keys', { csrf, name: 'a\u0000b', mode: 'test', scope_payments_read: 'on' }],
      ['/console/people', { csrf, email: email('j'), display_name: 'J', role: 'viewer' }],
      ['/console/account/password', { csrf, password: 'a password long enough' }],
      ['/console/sign-out', { csrf }],
    ] as const) {
      const res = await json(url, payload);
      expect([url, res.statusCode, res.headers['content-type']]).toEqual([url, 415, 'text/html; charset=utf-8']);
      expect(res.headers['content-security-policy']).toMatch(/^default-src 'none'/);
      expect(res.body).toContain('id="error" data-status="415"');
    }
    expect((await json('/console/keys', { csrf }, 'application/json; charset=utf-8')).statusCode).toBe(415);
    // The session still works (sign-out's JSON was refused unread), and the forms themselves are unchanged.
    expect((await admin.send('GET', '/console/account')).status).toBe(200);
    expect((await admin.send('POST', '/console/keys', { csrf, name: 'by form', mode: 'test', scope_payments_read: 'on' })).status).toBe(201);
  });
});
