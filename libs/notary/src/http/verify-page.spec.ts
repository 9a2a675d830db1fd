import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vm from 'node:vm';
import type { PublicSigningKey } from '@app/crypto';
import { canonicalJson } from '@app/crypto';
import type { VerificationReport } from '../certificates/certificate.service';
import type { SignedManifest } from '../domain/certificate';
import { CLIENT_JCS, CLIENT_SCRIPT, PAGE_STYLE } from './verify-page.client';
import { html, jsonForScript, renderErrorPage, renderVerifyPage, verificationChecks, VERIFY_PAGE_CSP } from './verify-page';
import { SIGNATURE_SCRIPT } from './verify-page.signature';

// The browser's canonicalizer, run in a fresh realm as the page would run it.
const jcs = vm.runInNewContext(`${CLIENT_JCS}; jcs`) as (value: unknown) => string;

// External RFC 8785 vectors, read at runtime: a missing folder fails the suite.
const VECTORS = path.resolve(__dirname, '../../../../../shared/vectors/jcs');
const vectorFiles = fs.readdirSync(path.join(VECTORS, 'input')).filter((f) => f.endsWith('.json'));

const key: PublicSigningKey = { key_id: 'k-1', algorithm: 'Ed25519', public_key: 'AAAA', created_at: '2025-01-01T00:00:00.000Z', status: 'active', retired_at: null, revoked_at: null };
const manifest: SignedManifest = {
  schema_version: 'service.manifest.v1',
  payload: {
    schema_version: 'service.cert.v1',
    certification_id: '123e4567-e89b-42d3-a456-426614174000',
    timestamp: '2025-06-01T12:00:00.000Z',
    issuer: 'sigil.test',
    dataset_hash: `sha256:${'a'.repeat(64)}`,
    algorithm: 'jcs-sha256',
    rows: 0,
    columns: 0,
    content_type: 'text',
    filename: '</script><script>alert(1)</script>.json',
  },
  signature: { alg: 'Ed25519', key_id: 'k-1', value: 'sig' },
};
// Cast: schema_version/is_supported/is_deprecated are newer than this page (legacy import).
const report = (reason: string | null, verified: boolean) =>
  ({
  verified,
  status: 'ISSUED',
  certificate_id: manifest.payload.certification_id,
  schema_version: 'service.cert.v1',
  is_supported: true,
  is_deprecated: false,
  issuer: 'sigil.test',
  issued_at: manifest.payload.timestamp,
  signature_alg: 'Ed25519',
  artifact_hash_match: null,
  reason,
  key_id: 'k-1',
  checks: { canonical_payload_hash: `sha256:${'b'.repeat(64)}`, signature: verified ? 'valid' : reason },
}) as VerificationReport;

describe('verify page: the in-browser canonicalizer', () => {
  it('finds the RFC 8785 vectors', () => expect(vectorFiles.length).toBeGreaterThan(0));

  it.each(vectorFiles)('%s canonicalizes to exactly the bytes of the output file', (file) => {
    const input = JSON.parse(fs.readFileSync(path.join(VECTORS, 'input', file), 'utf8'));
    expect(jcs(input)).toBe(fs.readFileSync(path.join(VECTORS, 'output', file), 'utf8'));
  });

  it('agrees with the service\u2019s canonicalJson, and refuses what the service refuses', () => {
    const values = [
      { b: [1, 2.5, -0, 1e21, 1e-7, 'x'], a: { '\u20ac': 1, '\ud83d\ude00': 2, '\r': 3, '1': 4 }, c: null, d: true },
      [{ id: 1, label: 'cat' }, { id: 2, label: 'dog', extra: false }],
      'text with "quotes" and \u2028 and \u0007',
      JSON.parse('{"__proto__": {"x": 1}, "big": 12345678901234567890}'),
    ];
    for (const v of values) expect(jcs(v)).toBe(canonicalJson(v));
    expect(() => jcs(JSON.parse('[1e400]'))).toThrow('out of range');
    expect(() => canonicalJson(JSON.parse('[1e400]'))).toThrow();
  });
});

describe('verify page: rendering', () => {
  it('escapes text and attributes, and keeps JSON in its script element', () => {
    expect(html(`<a href="x" title='y'>&</a>`)).toBe('&#60;a href=&#34;x&#34; title=&#39;y&#39;&#62;&#38;&#60;/a&#62;');
    const tricky = { s: '</script><!-- \u2028 & >' };
    expect(jsonForScript(tricky)).not.toMatch(/[<>&\u2028\u2029]/);
    expect(JSON.parse(jsonForScript(tricky))).toEqual(tricky);
  });

  it('allows exactly its own inline scripts and style by hash, and same-origin scripts (the SDK bundle)', () => {
    const page = renderVerifyPage({ report: report(null, true), manifest, key, bundleUrl: '/assets/sigil.browser.js?v=0123456789abcdef' });
    const scripts = [...page.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => m[1]);
    const styles = [...page.matchAll(/<style>([\s\S]*?)<\/style>/g)].map((m) => m[1]);
    expect(scripts).toEqual([CLIENT_SCRIPT, SIGNATURE_SCRIPT]);
    expect(styles).toEqual([PAGE_STYLE]);
    // The bundle loads before the check that uses it.
    expect(page).toContain(`<script src="/assets/sigil.browser.js?v=0123456789abcdef"></script>\n<script>${SIGNATURE_SCRIPT}</script>`);
    const hash = (s: string) => `'sha256-${createHash('sha256').update(s).digest('base64')}'`;
    expect(VERIFY_PAGE_CSP).toContain(`script-src 'self' ${hash(CLIENT_SCRIPT)} ${hash(SIGNATURE_SCRIPT)};`);
    expect(VERIFY_PAGE_CSP).toContain(`style-src ${hash(PAGE_STYLE)};`);
    expect(VERIFY_PAGE_CSP).toMatch(/^default-src 'none'; /);
    expect(VERIFY_PAGE_CSP).not.toMatch(/unsafe-inline|unsafe-eval|https?:/);
  });

  it('never lets certificate fields out of their text: filename with a script tag', () => {
    const page = renderVerifyPage({ report: report(null, true), manifest, key });
    expect(page).not.toContain('<script>alert(1)');
    expect(page).toContain('&#60;/script&#62;&#60;script&#62;alert(1)&#60;/script&#62;.json');
    const data = /<script type="application\/json" id="certificate-data">([\s\S]*?)<\/script>/.exec(page)![1];
    expect(JSON.parse(data).certificate).toEqual(manifest);
    expect(JSON.parse(data).key).toEqual(key);
  });

  it('names the failed check', () => {
    const states = (reason: string | null, verified = false) => verificationChecks(report(reason, verified), 'service.cert.v1', key).map((c) => c.state);
    expect(states(null, true)).toEqual(['pass', 'pass', 'pass', 'pass', 'pass']);
    expect(states('unsupported_schema_version')).toEqual(['pass', 'fail', 'skipped', 'skipped', 'skipped']);
    expect(states('unknown_key')).toEqual(['pass', 'pass', 'fail', 'skipped', 'skipped']);
    expect(states('signature_invalid')).toEqual(['pass', 'pass', 'pass', 'fail', 'skipped']);
    expect(states('key_revoked')).toEqual(['pass', 'pass', 'pass', 'pass', 'fail']);
    expect(states('signed_by_revoked_key_before_revocation', true)).toEqual(['pass', 'pass', 'pass', 'pass', 'warn']);
    const deprecated = verificationChecks({ ...report(null, true), is_deprecated: true } as VerificationReport, 'cert.v2', key)[1];
    expect(deprecated).toEqual({ name: 'Schema version supported', state: 'warn', detail: 'cert.v2 (deprecated)' });
    const page = renderVerifyPage({ report: report('signature_invalid', false), manifest, key });
    expect(page).toContain('<strong>Not verified</strong><p>Failed check: Ed25519 signature (<code>signature_invalid</code>)');
  });

  it('embeds the keys document, and says the in-browser check is unavailable when the bundle is not built', () => {
    const other = { ...key, key_id: 'k-retired', status: 'retired' as const, retired_at: '2026-01-01T00:00:00.000Z' };
    const page = renderVerifyPage({ report: report(null, true), manifest, key, keys: [other, key], bundleUrl: null });
    const data = JSON.parse(/<script type="application\/json" id="certificate-data">([\s\S]*?)<\/script>/.exec(page)![1]);
    expect(data.keys).toEqual({ keys: [other, key] });
    expect(page).not.toContain('<script src');
    expect(page).toContain('<div class="verdict" id="browser-verdict" data-state="unavailable"><strong id="browser-verdict-title">In-browser check unavailable</strong>');
    // The check still runs (and says the same), and the file check is untouched.
    expect([...page.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => m[1])).toEqual([CLIENT_SCRIPT, SIGNATURE_SCRIPT]);
  });

  it('renders error pages with the message escaped', () => {
    const page = renderErrorPage(404, 'not_found', 'Certificate not found', 'No certificate has the id <b>x</b>.');
    expect(page).toContain('<h1>Certificate not found</h1>');
    expect(page).toContain('No certificate has the id &#60;b&#62;x&#60;/b&#62;.');
    expect(page).not.toContain('<script');
  });
});
