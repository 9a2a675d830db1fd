import { createHash } from 'node:crypto';
import type { PublicSigningKey } from '@app/crypto';
import type { VerificationReport } from '../certificates/certificate.service';
import type { SignedManifest } from '../domain/certificate';
import { CLIENT_SCRIPT, PAGE_STYLE } from './verify-page.client';
import { SIGNATURE_SCRIPT } from './verify-page.signature';

/**
 * The public /verify/{id} page, rendered as a string: plain functions, no template engine.
 * Every interpolated value goes through `html()` (text and attributes) or `jsonForScript()`.
 */

export interface VerifyPageView {
  report: VerificationReport;
  manifest: SignedManifest;
  /** The signing key as published, or null when the key id is unknown. */
  key: PublicSigningKey | null;
  /** Every published key (the keys document), for the in-browser check. */
  keys?: PublicSigningKey[];
  /** Where the SDK's browser bundle is served; null when it is not built (the in-browser check is then unavailable). */
  bundleUrl?: string | null;
}

export function html(value: unknown): string {
  return String(value ?? '').replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** JSON for a `<script type="application/json">` element: nothing in it can close the element. */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

const cspHash = (text: string) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;

/**
 * Only the page's own inline scripts and style run (by hash), plus same-origin scripts: the SDK's
 * browser bundle. Nothing is fetched, framed or submitted.
 */
export const VERIFY_PAGE_CSP = [
  "default-src 'none'",
  `script-src 'self' ${cspHash(CLIENT_SCRIPT)} ${cspHash(SIGNATURE_SCRIPT)}`,
  `style-src ${cspHash(PAGE_STYLE)}`,
  'img-src data:',
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
  "require-trusted-types-for 'script'",
].join('; ');

type CheckState = 'pass' | 'fail' | 'warn' | 'skipped';
interface Check {
  name: string;
  state: CheckState;
  detail: string;
}

const REASONS: Record<string, string> = {
  signature_invalid: 'The Ed25519 signature does not match the payload: the certificate was altered, or this key did not sign it.',
  unknown_key: 'The signing key is not among the published keys.',
  key_revoked: 'The signing key was revoked before the time this certificate claims it was signed.',
  signed_after_retirement: 'The certificate claims a signing time after its key was retired.',
  invalid_signing_time: 'The certificate\u2019s timestamp is not a valid time, so the key\u2019s status cannot be applied.',
  signed_by_revoked_key_before_revocation: 'Signed before its key was revoked; the key is revoked now.',
  unsupported_schema_version: 'The certificate\u2019s schema version is not one this service verifies.',
};
export const describeReason = (reason: string | null) => (reason ? (REASONS[reason] ?? reason) : '');

/** The checks GET /api/verify/{id} made, in order, and which one failed (its `reason`). */
export function verificationChecks(report: VerificationReport, schemaVersion: string, key: PublicSigningKey | null): Check[] {
  const reason = report.reason;
  const unsupported = reason === 'unsupported_schema_version';
  const deprecated = 'is_deprecated' in report && report.is_deprecated === true;
  const keyStatusFailed = reason === 'key_revoked' || reason === 'signed_after_retirement' || reason === 'invalid_signing_time';
  const keyDetail = key ? `${key.key_id} (${key.status}${key.retired_at ? `, retired ${key.retired_at}` : ''}${key.revoked_at ? `, revoked ${key.revoked_at}` : ''})` : String(report.key_id);
  // Checks after the first failure were not made.
  const signatureSkipped = unsupported || reason === 'unknown_key';
  const statusSkipped = signatureSkipped || reason === 'signature_invalid';
  return [
    { name: 'Payload canonicalized (RFC 8785) and hashed', state: 'pass', detail: report.checks.canonical_payload_hash },
    { name: 'Schema version supported', state: unsupported ? 'fail' : deprecated ? 'warn' : 'pass', detail: `${schemaVersion}${unsupported ? ': not a schema this service verifies' : deprecated ? ' (deprecated)' : ''}` },
    { name: 'Signing key published', state: unsupported ? 'skipped' : reason === 'unknown_key' ? 'fail' : 'pass', detail: unsupported ? 'not checked' : keyDetail },
    {
      name: 'Ed25519 signature',
      state: signatureSkipped ? 'skipped' : reason === 'signature_invalid' ? 'fail' : 'pass',
      detail: signatureSkipped ? 'not checked' : reason === 'signature_invalid' ? describeReason(reason) : 'valid',
    },
    {
      name: 'Key status at signing time',
      state: statusSkipped ? 'skipped' : keyStatusFailed ? 'fail' : reason ? 'warn' : 'pass',
      detail: statusSkipped ? 'not checked' : reason ? describeReason(reason) : `the key was ${key?.status ?? 'valid'} for this signature`,
    },
  ];
}

const row = (name: string, value: string) => `<tr><th scope="row">${html(name)}</th><td>${value}</td></tr>`;
const code = (value: unknown) => `<code>${html(value)}</code>`;
const time = (iso: string | null) => (iso ? `<time datetime="${html(iso)}">${html(iso)}</time>` : '');

function layout(title: string, body: string, extra = ''): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>${html(title)}</title>
<style>${PAGE_STYLE}</style>
</head>
<body>
${body}
${extra}
</body>
</html>
`;
}

export function renderVerifyPage({ report, manifest, key, keys = key ? [key] : [], bundleUrl = null }: VerifyPageView): string {
  const p = manifest.payload;
  const id = report.certificate_id;
  const checks = verificationChecks(report, p.schema_version, key);
  const failed = checks.find((c) => c.state === 'fail');
  const verdict = report.verified
    ? `<div class="verdict ok" id="verdict" data-verified="true"><strong>Verified</strong><p>The signature is valid and its key\u2019s status allows it.${report.reason ? ` Warning: ${html(describeReason(report.reason))}` : ''}</p></div>`
    : `<div class="verdict bad" id="verdict" data-verified="false"><strong>Not verified</strong><p>Failed check: ${html(failed?.name ?? 'verification')} (${code(report.reason)}). ${html(describeReason(report.reason))}</p></div>`;
  const checkRows = checks.map((c) => `<tr class="check" data-state="${c.state}"><th scope="row">${html(c.name)}</th><td class="${c.state}">${c.state}</td><td>${html(c.detail)}</td></tr>`).join('\n');
  const details = [
    row('Certificate id', code(id)),
    row('Status', code(report.status)),
    row('Issuer', html(p.issuer)),
    row('Issued at', time(p.timestamp)),
    row('Artifact hash (dataset_hash)', `<code id="dataset-hash">${html(p.dataset_hash)}</code>`),
    row('Hashing', `${code(p.algorithm)}${p.algorithm === 'jcs-sha256' ? ' (JSON, canonicalized with RFC 8785)' : ''}`),
    p.filename ? row('File name', html(p.filename)) : '',
    p.content_type ? row('Content type', html(p.content_type)) : '',
    row('Rows \u00d7 columns', `${html(p.rows)} \u00d7 ${html(p.columns)}`),
    row('Schema', code(p.schema_version)),
    row('Signing key', `<code id="key-id">${html(manifest.signature.key_id)}</code> <span id="key-status">${html(key?.status ?? 'unknown key')}</span>${key?.retired_at ? ` (retired ${time(key.retired_at)})` : ''}${key?.revoked_at ? ` (revoked ${time(key.revoked_at)})` : ''}`),
    row('Signature', code(`${manifest.signature.alg} ${manifest.signature.value}`)),
  ].join('\n');
  const enc = encodeURIComponent(id);
  const browserCheck = bundleUrl
    ? '<strong id="browser-verdict-title">Checking in your browser\u2026</strong><p id="browser-verdict-detail"></p>'
    : '<strong id="browser-verdict-title">In-browser check unavailable</strong><p id="browser-verdict-detail">The SDK\u2019s browser bundle is not built on this server, so this page cannot check the signature itself; the server\u2019s verdict above is all it can show.</p>';
  const body = `<header>
<h1>Certificate ${html(id)}</h1>
<p class="source">The server\u2019s verdict</p>
${verdict}
<section id="browser-check">
<p class="source">Checked in your browser, by the Sigil SDK, from the signed payload and the published keys: it does not rely on the server\u2019s verdict</p>
<div class="verdict" id="browser-verdict" data-state="${bundleUrl ? 'pending' : 'unavailable'}">${browserCheck}</div>
<p><button type="button" id="recheck">Check again</button></p>
<noscript><p>Checking the signature in your browser needs JavaScript.</p></noscript>
</section>
</header>
<main>
<section>
<h2>Certificate</h2>
<table id="details">
${details}
</table>
</section>
<section>
<h2>Checks</h2>
<table id="checks">
${checkRows}
</table>
</section>
<section id="file-check">
<h2>Check a file against this certificate</h2>
<div id="drop-zone">
<p>Drop the artifact here, or <label for="file-input">choose it</label>: <input type="file" id="file-input"></p>
<p>The file is hashed in your browser and never uploaded.</p>
</div>
<noscript><p>Checking a file needs JavaScript. Compare its SHA-256 (of the RFC 8785 form, for JSON) with the hash above.</p></noscript>
<div id="file-result" hidden>
<p id="file-verdict"></p>
<table>
<tr><th scope="row">File</th><td id="file-name"></td></tr>
<tr><th scope="row">Hashed as</th><td id="file-method"></td></tr>
<tr><th scope="row">Computed</th><td><code id="file-hash"></code></td></tr>
<tr><th scope="row">Certified</th><td>${code(p.dataset_hash)}</td></tr>
</table>
</div>
</section>
<section>
<h2>Signed certificate (JSON)</h2>
<p><a href="/api/certificates/${enc}/signed-payload">signed payload</a> \u00b7 <a href="/api/certificates/${enc}/download">download</a> \u00b7 <a href="/api/verify/${enc}">verification (JSON)</a> \u00b7 <a href="/.well-known/signing-keys.json">signing keys</a></p>
<pre id="certificate-json">${html(JSON.stringify(manifest, null, 2))}</pre>
</section>
</main>`;
  // The data the scripts read: the file check, and the SDK's signature check (with the keys document).
  const data = `<script type="application/json" id="certificate-data">${jsonForScript({ certificate: manifest, key, keys: { keys }, verification: report })}</script>
<script>${CLIENT_SCRIPT}</script>
${bundleUrl ? `<script src="${html(bundleUrl)}"></script>\n` : ''}<script>${SIGNATURE_SCRIPT}</script>`;
  return layout(`Certificate ${id}`, body, data);
}

/** The HTML answer for an error on the page's route (unknown id, malformed id, throttled…). */
export function renderErrorPage(status: number, code: string, title: string, message: string): string {
  return layout(title, `<main>
<h1>${html(title)}</h1>
<p id="error-message">${html(message)}</p>
<p>HTTP ${html(status)} \u00b7 <code id="error-code">${html(code)}</code></p>
</main>`);
}
