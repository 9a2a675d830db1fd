import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { Browser, chromium, Page } from 'playwright-core';
import { AccessService, SCOPES } from '@app/access';
import { isolatedEnv } from './support/isolated-env';
import { startTestApp, TestApp } from './support/test-app';
import { eventually, WebhookReceiver } from './support/webhook-receiver';

/**
 * Two console journeys in a real headless Chromium (CHROMIUM_PATH, else Debian's at
 * /usr/bin/chromium), at 360 px wide, with no CSP violation or script error: create a webhook
 * endpoint (the secret shown once), send a test the receiver refuses, read the failed attempts
 * and redeliver it until it is delivered; then edit a policy with a mistake, see the field's
 * message beside the editor, correct it and save. Forms are filled and sent with the keyboard.
 * Another organization's endpoint is the 404 page. One browser for the file.
 */
describe('console webhooks and policies in a browser (e2e)', () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let access: AccessService;
  let receiver: WebhookReceiver;
  let iso: Awaited<ReturnType<typeof isolatedEnv>>;

  beforeAll(async () => {
    iso = await isolatedEnv();
    receiver = await new WebhookReceiver().start();
    t = await startTestApp({ ...iso.env, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_TIMEOUT_MS: '3000', WEBHOOK_RETRY_SCHEDULE_MS: '50,100', RATE_LIMITS: 'off' });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    access = t.app.get(AccessService);
    browser = await chromium.launch({
      executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await receiver?.close();
    await iso?.dispose();
  }, 120_000);

  /** An organization and the one-time sign-in link of its admin. */
  const admin = async () => {
    const org = await access.createOrganization(`console-wp-${randomBytes(3).toString('hex')}`);
    const key = await access.createApiKey(org.org_id, { scopes: [...SCOPES], mode: 'test' });
    const res = await fetch(`${base}/api/users`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ email: `admin-${randomBytes(4).toString('hex')}@example.com`, display_name: 'Ada Admin', role: 'admin' }),
    });
    expect(res.status).toBe(201);
    return new URL(((await res.json()) as { url: string }).url);
  };

  const fitsWidth = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth);
  const focused = (page: Page) => page.evaluate(() => document.activeElement?.id ?? '');

  it('creates an endpoint and redelivers a failed delivery; edits a policy with a mistake and sees the field\u2019s message', async () => {
    const link = await admin();
    // The receiver refuses the first series (three attempts) and takes the redelivery.
    const route = receiver.route('journey-endpoint-with-a-rather-long-path-for-a-narrow-screen', (n) => (n <= 3 ? { status: 500, body: 'receiver <b>down</b>' } : { status: 204 }));

    const page = await browser.newPage({ viewport: { width: 360, height: 740 } });
    const problems: string[] = [];
    page.on('pageerror', (err) => problems.push(`pageerror: ${err.message}`));
    page.on('console', (msg) => {
      if (msg.type() === 'error' && !/Failed to load resource/.test(msg.text())) problems.push(`console: ${msg.text()}`);
    });

    await page.goto(`${base}${link.pathname}${link.search}`);
    await Promise.all([page.waitForURL(`${base}/console/approvals`), page.click('#use-link')]);

    // Webhooks: the navigation leads there; the form is labelled and reached with Tab.
    await Promise.all([page.waitForURL(`${base}/console/webhooks`), page.click('nav a[href="/console/webhooks"]')]);
    expect(await page.textContent('h1')).toBe('Webhooks');
    expect(await fitsWidth(page)).toBe(true);
    await page.getByLabel('URL (https://…)').focus();
    await page.keyboard.type(route.url);
    await page.keyboard.press('Tab');
    expect(await focused(page)).toBe('ep-description');
    await page.keyboard.type('journey');
    await page.keyboard.press('Tab');
    expect(await focused(page)).toBe('ev-0');
    await page.getByLabel('URL (https://…)').focus();
    // The answer to the POST is the page with the secret (same URL): wait for it, not for a navigation.
    await Promise.all([page.waitForSelector('#secret'), page.keyboard.press('Enter')]);
    expect(await page.textContent('h1')).toBe('Endpoint created');
    expect(await page.textContent('#secret')).toMatch(/^whsec_[A-Za-z0-9+/=]+$/);
    expect(await fitsWidth(page)).toBe(true);
    await Promise.all([page.waitForURL(/\/console\/webhooks\/ep_[0-9a-f]{32}$/), page.click('#to-endpoint')]);
    const endpointUrl = page.url();
    expect(await fitsWidth(page)).toBe(true);

    // Send a test (the button, with Enter); the receiver refuses it three times.
    await page.focus('form[action$="/test"] button');
    await Promise.all([page.waitForURL(/done=test/), page.keyboard.press('Enter')]);
    expect(await page.textContent('#flash')).toContain('webhook.test ping is on its way');
    await eventually(async () => {
      await page.goto(`${endpointUrl}?status=failed`);
      return (await page.locator('#deliveries tr[data-delivery-id]').count()) === 1;
    }, 20_000, 'the failed delivery in the list');
    expect(await fitsWidth(page)).toBe(true);
    await Promise.all([page.waitForURL(/\/console\/webhooks\/deliveries\/dlv_/), page.click('#deliveries a')]);
    expect(await page.textContent('#delivery-status')).toBe('failed');
    expect(await page.locator('#attempts .status-code').allTextContents()).toEqual(['500', '500', '500']);
    await page.locator('#attempts details').first().locator('summary').click();
    expect(await page.locator('#attempts .response-body').first().textContent()).toBe('receiver <b>down</b>');
    expect(await fitsWidth(page)).toBe(true);

    // Redeliver: a new series, delivered.
    await page.focus('#redeliver');
    await Promise.all([page.waitForURL(/done=redelivered/), page.keyboard.press('Enter')]);
    expect(await page.textContent('#flash')).toContain('new series of attempts');
    const deliveryUrl = page.url().split('?')[0];
    await eventually(async () => {
      await page.goto(deliveryUrl);
      return (await page.textContent('#delivery-status')) === 'delivered';
    }, 20_000, 'the redelivery to be delivered');
    expect(await page.locator('#attempts .status-code').allTextContents()).toEqual(['500', '500', '500', '204']);
    expect(receiver.on(route.path)).toHaveLength(4);

    // Policies: a mistake, its field's message beside the editor, then the correction.
    await Promise.all([page.waitForURL(`${base}/console/policies/default`), page.click('nav a[href="/console/policies"]')]);
    expect(await page.textContent('#no-policy')).toContain('no version yet');
    await page.getByLabel('Policy document (JSON)').fill(JSON.stringify({ limits: { USD: { per_transaction_cents: 50_000, review_above_cents: 90_000 } } }, null, 2));
    await Promise.all([page.waitForSelector('#err-policy-json'), page.click('#edit-policy button[type="submit"]')]);
    const message = page.locator('#err-policy-json li[data-field="limits.USD.review_above_cents"]');
    expect(await message.textContent()).toBe('limits.USD.review_above_cents must not be above per_transaction_cents');
    expect(await page.getAttribute('#policy-json', 'aria-invalid')).toBe('true');
    expect(await page.getAttribute('#policy-json', 'aria-describedby')).toBe('err-policy-json');
    expect(await page.inputValue('#policy-json')).toContain('"review_above_cents": 90000');
    // The summary's link takes the keyboard to the editor.
    await page.focus('#form-errors a');
    await page.keyboard.press('Enter');
    expect(await page.evaluate(() => location.hash)).toBe('#policy-json');
    expect(await fitsWidth(page)).toBe(true);

    await page.getByLabel('Policy document (JSON)').fill(JSON.stringify({ limits: { USD: { per_transaction_cents: 50_000, review_above_cents: 20_000 } } }));
    await Promise.all([page.waitForURL(/done=saved/), page.click('#edit-policy button[type="submit"]')]);
    expect(await page.textContent('#flash')).toContain('A new version is recorded');
    expect(await page.textContent('#current-version')).toBe('1');

    // Simulate before the next change.
    await Promise.all([page.waitForSelector('#sim-decision'), page.click('#simulate button[type="submit"]')]);
    expect(await page.textContent('#sim-decision')).toBe('needs_review');

    // Another organization's endpoint: the 404 page.
    const otherLink = await admin();
    const other = await browser.newPage({ viewport: { width: 360, height: 740 } });
    await other.goto(`${base}${otherLink.pathname}${otherLink.search}`);
    await Promise.all([other.waitForURL(`${base}/console/approvals`), other.click('#use-link')]);
    const res = await other.goto(endpointUrl);
    expect(res?.status()).toBe(404);
    expect(await other.textContent('h1')).toBe('Not found');
    await other.close();

    expect(problems).toEqual([]);
    await page.close();
  });
});
