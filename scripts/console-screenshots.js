#!/usr/bin/env node
// Screenshots of the console for docs/console/ (and the README): `node scripts/console-screenshots.js`.
// Starts the api as `npm start` does, on a fresh embedded data dir (its first start prints the demo
// key and the demo owner's one-time console link), makes payments to review, signs in with the link
// in headless Chromium (CHROMIUM_PATH, else /usr/bin/chromium), and saves one PNG per page.
'use strict';
const { execFileSync, spawn } = require('node:child_process');
const { mkdirSync, mkdtempSync, rmSync } = require('node:fs');
const { createServer } = require('node:net');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { chromium } = require('playwright-core');

const root = join(__dirname, '..');
const out = join(root, 'docs', 'console');

const freePort = () =>
  new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

async function main() {
  execFileSync(process.execPath, [join(__dirname, 'sdk-build.js'), 'browser'], { stdio: ['ignore', 'ignore', 'inherit'] });
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'sigil-shots-'));
  const child = spawn(process.execPath, [join(__dirname, 'start.js'), 'api'], {
    cwd: root,
    // The endpoint points at a closed local port (no network here), so its deliveries show failed attempts.
    env: { PATH: process.env.PATH, HOME: process.env.HOME, PORT: String(port), DATA_DIR: dataDir, LOG_LEVEL: 'warn', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const base = `http://127.0.0.1:${port}`;
  try {
    let key, link;
    for (let i = 0; i < 600 && !(key && link && stderr.includes('Sigil is running at')); i++) {
      await new Promise((r) => setTimeout(r, 100));
      key = /\n {2}(cdp_test_[0-9a-f]{64})\n/.exec(stderr)?.[1];
      link = /(\/console\/sign-in\/link\?token=sgl_[0-9a-f]{64})/.exec(stderr)?.[1];
    }
    if (!key || !link) throw new Error(`the api did not print the demo key and link:\n${stderr}`);
    const api = async (method, path, body) => {
      const res = await fetch(`${base}${path}`, { method, headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body && JSON.stringify(body) });
      return res.json();
    };
    await api('PUT', '/api/cdp/policies/default', { limits: { USD: { per_transaction_cents: 100_000, review_above_cents: 20_000 } } });
    const endpoint = await api('POST', '/api/cdp/webhooks/endpoints', { url: 'http://127.0.0.1:9/hooks/sigil', description: 'Payments ledger' });
    const pay = (amount_cents, merchant_id, purpose_tag, agent) =>
      api('POST', '/api/cdp/authorize', { amount_cents, currency: 'USD', merchant_id, purpose_tag, delegated_authority: agent, expiration_iso: new Date(Date.now() + 3 * 3600_000).toISOString() });
    const small = await pay(4_500, 'm_coffee', 'meals', 'did:cd:agent:travel-bot');
    await api('POST', `/api/cdp/transactions/${small.transaction_id}/execute`);
    await pay(32_000, 'm_hotel_lisbon', 'travel', 'did:cd:agent:travel-bot');
    await pay(64_900, 'm_airline', 'travel', 'did:cd:agent:travel-bot');
    // A second policy version (for the versions page's diff) and a certificate.
    await api('PUT', '/api/cdp/policies/default', { limits: { USD: { per_transaction_cents: 100_000, review_above_cents: 15_000 } }, merchants: { blocked: ['m_casino'] } });
    await api('POST', '/api/notary/create', { content: JSON.stringify([{ city: 'Lisbon', kwh: 412 }, { city: 'Porto', kwh: 388 }]), visibility: 'public' });

    const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium', headless: true, args: ['--no-sandbox', '--disable-gpu', '--no-first-run'] });
    mkdirSync(out, { recursive: true });
    const page = await browser.newPage({ viewport: { width: 1100, height: 760 } });
    const shot = async (name, path) => {
      if (path) await page.goto(`${base}${path}`);
      await page.waitForLoadState('networkidle');
      await page.screenshot({ path: join(out, `${name}.png`), fullPage: true });
      process.stderr.write(`docs/console/${name}.png\n`);
    };
    await shot('sign-in', '/console/sign-in');
    await page.goto(`${base}${link}`);
    await Promise.all([page.waitForURL(/\/console\/approvals/), page.click('#use-link')]);
    await shot('approvals');
    await shot('transactions', '/console/transactions');
    await shot('timeline', `/console/transactions/${small.transaction_id}`);
    await shot('keys', '/console/keys');
    await shot('people', '/console/people');
    await shot('account', '/console/account');
    await shot('webhooks', '/console/webhooks');
    if (endpoint.id) await shot('webhook-endpoint', `/console/webhooks/${endpoint.id}`);
    await shot('policy', '/console/policies/default');
    await shot('policy-versions', '/console/policies/default/versions');
    await shot('certificates', '/console/certificates');
    await page.setViewportSize({ width: 360, height: 740 });
    await shot('approvals-360', '/console/approvals');
    await browser.close();
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  process.stderr.write(`console-screenshots: ${err.message}\n`);
  process.exit(1);
});
