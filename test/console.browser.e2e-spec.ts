import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { Browser, chromium, Page } from 'playwright-core';
import { AccessService, SCOPES } from '@app/access';
import { SqlDatabase } from '@app/event-store';
import { startTestApp, TestApp } from './support/test-app';

/**
 * The console as a person uses it, in a real headless Chromium (CHROMIUM_PATH, else Debian's at
 * /usr/bin/chromium): sign in by a one-time link with the keyboard alone, approve one payment
 * for less and reject another, see the timeline; at 360 px wide; no CSP violation or script
 * error anywhere; another organization's transaction is the 404 page. One browser for the file.
 */
describe('console in a browser (e2e)', () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let access: AccessService;

  beforeAll(async () => {
    // The timeline page checks the chain with the SDK's browser bundle: built when missing or stale.
    execFileSync(process.execPath, [join(__dirname, '../scripts/sdk-build.js'), 'browser'], { stdio: ['ignore', 'ignore', 'inherit'], timeout: 180_000 });
    t = await startTestApp({ RATE_LIMITS: 'off' });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    access = t.app.get(AccessService);
    browser = await chromium.launch({
      executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
  }, 240_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  }, 120_000);

  const api = async (method: string, path: string, key: string, body?: unknown) => {
    const res = await fetch(`${base}${path}`, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  const world = async () => {
    const org = await access.createOrganization(`console-browser-${randomBytes(3).toString('hex')}`);
    const admin = await access.createApiKey(org.org_id, { scopes: [...SCOPES], mode: 'test' });
    expect((await api('PUT', '/api/cdp/policies/default', admin.key, { limits: { USD: { per_transaction_cents: 50_000, review_above_cents: 20_000 } } })).status).toBe(200);
    const escalate = async (amount: number, merchant: string) => {
      const d = (await api('POST', '/api/cdp/authorize', admin.key, { amount_cents: amount, currency: 'USD', merchant_id: merchant, purpose_tag: 'travel', expiration_iso: new Date(Date.now() + 3600_000).toISOString() })).body;
      expect(d.decision).toBe('needs_review');
      return d as { transaction_id: string; authorization_id: string };
    };
    return { org, admin, escalate };
  };

  /** A page at a phone's width, recording CSP violations and script errors (there must be none). */
  const open = async () => {
    const page = await browser.newPage({ viewport: { width: 360, height: 740 } });
    const problems: string[] = [];
    page.on('pageerror', (err) => problems.push(`pageerror: ${err.message}`));
    page.on('console', (msg) => {
      // The 404 page (and the favicon's) log "Failed to load resource": expected; a refused script or style is not.
      if (msg.type() === 'error' && !/Failed to load resource/.test(msg.text())) problems.push(`console: ${msg.text()}`);
    });
    return { page, problems };
  };
  const fitsWidth = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth);

  it('sign in by link (keyboard only), approve one payment for less and reject another, see the timeline', async () => {
    const { admin, escalate } = await world();
    const hotel = await escalate(30_000, 'm_hotel');
    const flight = await escalate(45_000, 'm_flight');
    const invited = (await api('POST', '/api/users', admin.key, { email: `rev-${randomBytes(4).toString('hex')}@example.com`, display_name: 'Rita Reviewer', role: 'reviewer' })).body as { url: string };
    const link = new URL(invited.url);

    const { page, problems } = await open();
    expect((await page.goto(`${base}${link.pathname}${link.search}`))?.status()).toBe(200);
    // Keyboard only: Tab to the button, Enter.
    for (let i = 0; i < 10 && (await page.evaluate(() => document.activeElement?.id)) !== 'use-link'; i++) await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('use-link');
    await Promise.all([page.waitForURL(`${base}/console/approvals`), page.keyboard.press('Enter')]);
    expect(await page.textContent('h1')).toBe('Approvals');
    // The same-origin stylesheet applied under the CSP.
    expect(await page.evaluate(() => getComputedStyle(document.querySelector('.skip')!).position)).toBe('absolute');
    expect(await page.textContent('.who')).toContain('Rita Reviewer');
    expect(await fitsWidth(page)).toBe(true);

    const hotelCard = page.locator(`[data-authorization-id="${hotel.authorization_id}"]`);
    expect(await hotelCard.locator('h2').textContent()).toBe('300.00 USD to m_hotel');
    expect(await hotelCard.locator('.rule').textContent()).toContain('review_threshold');
    expect(await hotelCard.locator('[data-expires-at]').textContent()).toMatch(/^(59 min|1 h 0 min)$/);
    await hotelCard.locator('input[name="amount"]').fill('250');
    await hotelCard.locator('textarea[name="note"]').first().fill('within the travel budget');
    await Promise.all([page.waitForURL(/done=approved/), hotelCard.locator('button[value="approve"]').click()]);
    expect(await page.textContent('#flash')).toContain('approved');

    const flightCard = page.locator(`[data-authorization-id="${flight.authorization_id}"]`);
    await flightCard.locator('form[action$="/reject"] textarea').fill('not this airline');
    await Promise.all([page.waitForURL(/done=rejected/), flightCard.locator('button[value="reject"]').click()]);
    expect(await page.textContent('#empty')).toContain('No payment is waiting');

    await page.goto(`${base}/console/transactions`);
    expect(await fitsWidth(page)).toBe(true);
    await Promise.all([page.waitForURL(`${base}/console/transactions/${hotel.transaction_id}`), page.click(`a[href="/console/transactions/${hotel.transaction_id}"]`)]);
    expect(await page.textContent('#tx-status')).toBe('authorized');
    expect(await page.textContent('#chain-verdict')).toBe('Valid');
    expect(await page.locator('#timeline li').evaluateAll((lis) => lis.map((li) => li.getAttribute('data-event-type')))).toEqual(expect.arrayContaining(['authorization.requested', 'authorization.escalated', 'authorization.human_approved']));
    expect(await page.textContent('#reviews')).toContain('approved by Rita Reviewer: “within the travel budget”');
    expect(await fitsWidth(page)).toBe(true);
    // The SDK bundle checks the same chain in the browser.
    await page.locator('#browser-verdict:not([data-state="pending"])').waitFor();
    expect(await page.getAttribute('#browser-verdict', 'data-state')).toBe('valid');
    expect(await page.textContent('#browser-verdict .title')).toBe('Valid in your browser');

    // Someone edits a stored event with SQL: the server's verdict and the browser's both say which link broke.
    await t.app.get(SqlDatabase).query(`UPDATE events SET data = jsonb_set(data::jsonb, '{request,amount_cents}', '1')::json WHERE stream_id = $1 AND revision = 0`, [`transaction-${flight.transaction_id}`]);
    await page.goto(`${base}/console/transactions/${flight.transaction_id}`);
    expect(await page.textContent('#chain-verdict')).toBe('Broken at event 1 (hash_mismatch)');
    await page.locator('#browser-verdict:not([data-state="pending"])').waitFor();
    expect(await page.getAttribute('#browser-verdict', 'data-state')).toBe('invalid');
    expect(await page.getAttribute('#browser-verdict', 'data-broken-at')).toBe('1');
    expect(await page.textContent('#browser-verdict .detail')).toContain('at event 1');

    // Another organization's transaction: the 404 page.
    const other = await world();
    const foreign = await other.escalate(30_000, 'm_other');
    const res = await page.goto(`${base}/console/transactions/${foreign.transaction_id}`);
    expect(res?.status()).toBe(404);
    expect(await page.textContent('h1')).toBe('Not found');

    // Sign out with the keyboard's Enter on the button.
    await page.goto(`${base}/console/account`);
    await page.focus('form[action="/console/sign-out"] button');
    await Promise.all([page.waitForURL(`${base}/console/sign-in`), page.keyboard.press('Enter')]);
    expect((await page.goto(`${base}/console/approvals`))?.url()).toBe(`${base}/console/sign-in`);

    expect(problems).toEqual([]);
    await page.close();
  });

  it('keys: create a key (shown once), the API takes it; revoke it, the API refuses it at once', async () => {
    const { admin } = await world();
    const invited = (await api('POST', '/api/users', admin.key, { email: `adm-${randomBytes(4).toString('hex')}@example.com`, display_name: 'Ari Admin', role: 'admin' })).body as { url: string };
    const link = new URL(invited.url);
    const { page, problems } = await open();
    await page.goto(`${base}${link.pathname}${link.search}`);
    await Promise.all([page.waitForURL(`${base}/console/approvals`), page.click('#use-link')]);
    await page.click('a[href="/console/keys"]');
    await page.fill('#key-name', 'reporting');
    await page.selectOption('#key-mode', 'live');
    await page.check('#scope-payments-read');
    await Promise.all([page.waitForSelector('#new-key-secret'), page.click('form[action="/console/keys"] button[type="submit"]')]);
    const secret = (await page.textContent('#new-key-secret'))!;
    expect(secret).toMatch(/^cdp_live_[0-9a-f]{64}$/);
    expect(await fitsWidth(page)).toBe(true);
    const me = await api('GET', '/api/me', secret);
    expect(me).toMatchObject({ status: 200, body: { scopes: ['payments:read'] } });

    const row = page.locator(`tr[data-key-id="${me.body.key_id as string}"]`);
    await Promise.all([page.waitForURL(/done=revoked/), row.locator('button').click()]);
    expect(await page.locator(`tr[data-key-id="${me.body.key_id as string}"] .status`).textContent()).toBe('revoked');
    expect((await api('GET', '/api/me', secret)).status).toBe(401);
    expect(problems).toEqual([]);
    await page.close();
  });
});
