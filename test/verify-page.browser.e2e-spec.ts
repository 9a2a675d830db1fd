import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { Browser, chromium, Page } from 'playwright-core';
import { AccessService } from '@app/access';
import { canonicalJson } from '@app/crypto';
import { startTestApp, TestApp } from './support/test-app';

/**
 * The /verify/{id} page in a real headless Chromium (CHROMIUM_PATH, else Debian's at /usr/bin/chromium;
 * jest's global setup finds or installs it before the run): its inline script runs under the page's CSP, hashes a dropped or chosen file
 * with WebCrypto as the service does (JCS for JSON, raw bytes otherwise) and says whether it matches;
 * and the SDK's browser bundle checks the signature itself, beside the server's verdict.
 */
describe('verify page in a browser (e2e)', () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let access: AccessService;

  beforeAll(async () => {
    // The page loads the SDK's browser bundle (libs/sdk/dist/sigil.browser.js): built when missing or stale.
    execFileSync(process.execPath, [join(__dirname, '../scripts/sdk-build.js'), 'browser'], { stdio: ['ignore', 'ignore', 'inherit'], timeout: 180_000 });
    t = await startTestApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    access = t.app.get(AccessService);
    browser = await chromium.launch({
      executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
  });
  // On a loaded CI machine Chromium can take long to exit; say which step was slow rather than
  // fail the suite after its tests passed (one CI run spent over a minute here).
  afterAll(async () => {
    const timed = async (what: string, step: () => Promise<void> | undefined) => {
      const started = Date.now();
      await step();
      const ms = Date.now() - started;
      if (ms > 10_000) process.stderr.write(`verify-page.browser: ${what} took ${ms} ms\n`);
    };
    await timed('closing the browser', () => browser?.close());
    await timed('closing the app', () => t?.close());
  }, 180_000);

  const issue = async (content: string) => {
    const org = await access.createOrganization(`verify-browser-${randomBytes(3).toString('hex')}`);
    const { key } = await access.createApiKey(org.org_id, { scopes: ['certificates:write'], mode: 'test' });
    const res = await fetch(`${base}/api/notary/create`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ content }) });
    expect(res.status).toBe(200);
    return (await res.json()) as { certificate_id: string; dataset_hash: string };
  };

  /** Opens the page, recording CSP violations and script errors (there must be none). */
  const open = async (certificateId: string): Promise<{ page: Page; problems: string[] }> => {
    const page = await browser.newPage();
    const problems: string[] = [];
    page.on('pageerror', (err) => problems.push(`pageerror: ${err.message}`));
    page.on('console', (msg) => {
      if (msg.type() === 'error' && /Content Security Policy|Trusted Type/i.test(msg.text())) problems.push(`console: ${msg.text()}`);
    });
    const res = await page.goto(`${base}/verify/${certificateId}`);
    expect(res?.status()).toBe(200);
    // A script the CSP refused would show here first (and then nothing would get hashed).
    expect(problems).toEqual([]);
    return { page, problems };
  };

  /** Drops a file on the drop zone the way a browser does: a drop event carrying a DataTransfer. */
  const drop = async (page: Page, name: string, text: string) => {
    const dataTransfer = await page.evaluateHandle(
      ({ name, text }) => {
        const dt = new DataTransfer();
        dt.items.add(new File([text], name, { type: 'application/octet-stream' }));
        return dt;
      },
      { name, text },
    );
    await page.dispatchEvent('#drop-zone', 'drop', { dataTransfer });
  };

  /** The result shown for the file `name`, once hashed. */
  const resultFor = async (page: Page, name: string) => {
    await page.locator('#file-result:not([data-state="pending"]) #file-name', { hasText: name }).waitFor();
    return {
      state: await page.getAttribute('#file-result', 'data-state'),
      verdict: await page.textContent('#file-verdict'),
      hash: await page.textContent('#file-hash'),
      method: await page.textContent('#file-method'),
    };
  };

  it('a dropped JSON file matches when it is the certified JSON pretty-printed, and not otherwise', async () => {
    const data = { model: 'm-7', metrics: { f1: 0.5, accuracy: 0.93 }, labels: ['caf\u00e9', '\u20ac', '\ud83d\ude00'], '\u00e9t\u00e9': true, big: 1e21 };
    const cert = await issue(JSON.stringify(data));
    const { page, problems } = await open(cert.certificate_id);
    expect(await page.textContent('#verdict strong')).toBe('Verified');
    expect(await page.textContent('#dataset-hash')).toBe(cert.dataset_hash);

    // Same JSON, other key order, indentation and number spellings: the same JCS bytes.
    const pretty = `{\n    "\u00e9t\u00e9": true,\n    "big": 1E21,\n    "labels": [ "caf\u00e9", "\\u20ac", "\ud83d\ude00" ],\n    "metrics": { "accuracy": 0.930, "f1": 5e-1 },\n    "model": "m-7"\n}\n`;
    expect(JSON.parse(pretty)).toEqual(data);
    expect(pretty).not.toBe(JSON.stringify(data));
    await drop(page, 'pretty.json', pretty);
    expect(await resultFor(page, 'pretty.json')).toEqual({ state: 'match', verdict: 'Match', hash: cert.dataset_hash, method: 'JSON, canonicalized (RFC 8785) then SHA-256' });

    const other = { ...data, model: 'm-8' };
    await drop(page, 'other.json', JSON.stringify(other, null, 2));
    const mismatch = await resultFor(page, 'other.json');
    expect(mismatch).toMatchObject({ state: 'mismatch', verdict: 'No match' });
    // The page shows the hash the service would have certified for that file.
    expect(mismatch.hash).toBe(`sha256:${createHash('sha256').update(canonicalJson(other)).digest('hex')}`);

    // The file input does the same as a drop.
    await page.setInputFiles('#file-input', { name: 'chosen.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(data, null, '\t')) });
    expect(await resultFor(page, 'chosen.json')).toMatchObject({ state: 'match', verdict: 'Match', hash: cert.dataset_hash });

    expect(problems).toEqual([]);
    await page.close();
  });

  it('a text certificate matches the same bytes only', async () => {
    const text = 'id,label\n1,caf\u00e9\n2,<dog>\n';
    const cert = await issue(text);
    const { page, problems } = await open(cert.certificate_id);
    await drop(page, 'labels.csv', text);
    expect(await resultFor(page, 'labels.csv')).toEqual({ state: 'match', verdict: 'Match', hash: cert.dataset_hash, method: 'SHA-256 of the raw bytes' });

    await page.setInputFiles('#file-input', { name: 'changed.csv', mimeType: 'text/csv', buffer: Buffer.from(text.trimEnd()) });
    const changed = await resultFor(page, 'changed.csv');
    expect(changed).toMatchObject({ state: 'mismatch', verdict: 'No match' });
    expect(changed.hash).toBe(`sha256:${createHash('sha256').update(text.trimEnd()).digest('hex')}`);

    await page.setInputFiles('#file-input', { name: 'same.csv', mimeType: 'text/csv', buffer: Buffer.from(text) });
    expect(await resultFor(page, 'same.csv')).toMatchObject({ state: 'match', verdict: 'Match' });
    expect(problems).toEqual([]);
    await page.close();
  });

  /** The in-browser verdict, once the SDK's check has run. */
  const browserVerdict = async (page: Page) => {
    await page.locator('#browser-verdict:not([data-state="pending"])').waitFor();
    return {
      state: await page.getAttribute('#browser-verdict', 'data-state'),
      reason: await page.getAttribute('#browser-verdict', 'data-reason'),
      title: await page.textContent('#browser-verdict-title'),
      detail: await page.textContent('#browser-verdict-detail'),
    };
  };

  it('checks the signature in the browser with the SDK: valid; a payload tampered in the page is invalid', async () => {
    const cert = await issue(JSON.stringify({ model: 'm-9', accuracy: 0.91 }));
    const { page, problems } = await open(cert.certificate_id);
    const script = await page.getAttribute('script[src]', 'src');
    expect(script).toMatch(/^\/assets\/sigil\.browser\.js\?v=[0-9a-f]{16}$/);
    expect(await page.evaluate(() => typeof (window as unknown as { Sigil?: { verifyCertificate?: unknown } }).Sigil?.verifyCertificate)).toBe('function');
    const valid = await browserVerdict(page);
    expect(valid).toMatchObject({ state: 'valid', reason: null, title: 'Valid' });
    const keyId = (await page.textContent('#key-id'))!;
    expect(valid.detail).toContain(`with key ${keyId} (active)`);

    // Someone edits the signed payload in the page (say, a proxy): the browser's own check fails,
    // whatever the server's verdict above still says.
    const setData = (edit: 'tamper' | 'restore') =>
      page.evaluate((edit) => {
        const el = document.getElementById('certificate-data')!;
        const w = window as unknown as { original?: string; trustedTypes: { createPolicy(n: string, p: object): { createScript(s: string): string } } };
        w.original ??= el.textContent!;
        const data = JSON.parse(w.original);
        if (edit === 'tamper') data.certificate.payload.accuracy = 0.99;
        // The page requires Trusted Types for script sinks, a <script>'s text included.
        el.textContent = w.trustedTypes.createPolicy(`edit-${edit}`, { createScript: (s: string) => s }).createScript(JSON.stringify(data));
      }, edit);
    await setData('tamper');
    await page.click('#recheck');
    const tampered = await browserVerdict(page);
    expect(tampered).toMatchObject({ state: 'invalid', reason: 'signature_invalid', title: 'Not valid' });
    expect(tampered.detail).toContain('the Ed25519 signature does not match this payload');
    expect(await page.textContent('#verdict strong')).toBe('Verified');

    // The hook re-reads the data as the button does: the genuine payload is valid again.
    await setData('restore');
    expect(await page.evaluate(() => (window as unknown as { sigilVerifyPage: { check(): { valid: boolean } } }).sigilVerifyPage.check().valid)).toBe(true);
    expect(await page.getAttribute('#browser-verdict', 'data-state')).toBe('valid');
    expect(problems).toEqual([]);
    await page.close();
  });

  it('serves the bundle as JavaScript with a long cache for its versioned address', async () => {
    const cert = await issue('bundle headers');
    const { page } = await open(cert.certificate_id);
    const src = (await page.getAttribute('script[src]', 'src'))!;
    await page.close();
    const res = await fetch(`${base}${src}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    const body = await res.text();
    expect(body).toContain('Sigil');
    expect(`?v=${createHash('sha256').update(body).digest('hex').slice(0, 16)}`).toBe(src.slice(src.indexOf('?')));
    const unversioned = await fetch(`${base}/assets/sigil.browser.js`);
    expect(unversioned.headers.get('cache-control')).toBe('public, max-age=300');
  });

  it('says the in-browser check is unavailable when the bundle does not load, and the rest of the page works', async () => {
    const text = 'no bundle here';
    const cert = await issue(text);
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(err.message));
    await page.route('**/assets/sigil.browser.js*', (route) => route.abort());
    expect((await page.goto(`${base}/verify/${cert.certificate_id}`))?.status()).toBe(200);
    expect(await browserVerdict(page)).toMatchObject({ state: 'unavailable', title: 'In-browser check unavailable' });
    expect(await page.textContent('#verdict strong')).toBe('Verified');
    await drop(page, 'same.txt', text);
    expect(await resultFor(page, 'same.txt')).toMatchObject({ state: 'match' });
    expect(errors).toEqual([]);
    await page.close();
  });
});
