/**
 * The /verify/{id} page's in-browser signature check, as plain ES2020 text (allowed by its hash in
 * the page's CSP, like the page's other script). It runs the SDK's own verifier from the browser
 * bundle (global `Sigil`) on the embedded signed payload and keys document, so the visitor does not
 * have to trust the server's verdict; it shows its own verdict beside the server's.
 * `window.sigilVerifyPage.check()` (or the "Check again" button) re-reads the embedded data.
 */
export const SIGNATURE_SCRIPT = `
(function () {
  'use strict';
  var REASONS = {
    signature_invalid: 'the Ed25519 signature does not match this payload: it was altered, or that key did not sign it',
    unknown_key: 'the signing key is not among the published keys',
    key_revoked: 'the signing key was revoked before the time the certificate claims',
    signed_after_retirement: 'the certificate claims a signing time after its key was retired',
    invalid_signing_time: 'the certificate\\u2019s timestamp is not a valid time',
    unsupported_schema_version: 'this schema version is not one the SDK verifies',
    malformed: 'the signed payload is not a certificate',
    invalid_keys_document: 'the keys document is not readable'
  };
  var box = document.getElementById('browser-verdict');
  var title = document.getElementById('browser-verdict-title');
  var detail = document.getElementById('browser-verdict-detail');

  function show(state, heading, text, reason) {
    box.setAttribute('data-state', state);
    if (reason) box.setAttribute('data-reason', reason); else box.removeAttribute('data-reason');
    title.textContent = heading;
    detail.textContent = text;
  }

  function check() {
    var sdk = window.Sigil;
    if (!sdk || typeof sdk.verifyCertificate !== 'function') {
      show('unavailable', 'In-browser check unavailable', 'The SDK bundle could not be loaded, so this page cannot check the signature itself; the server\\u2019s verdict above is all it can show.');
      return null;
    }
    var data;
    try {
      data = JSON.parse(document.getElementById('certificate-data').textContent);
    } catch (e) {
      show('invalid', 'Not valid', 'The certificate data in this page is not readable JSON.', 'malformed');
      return null;
    }
    var r = sdk.verifyCertificate(data.certificate, data.keys);
    if (r.valid) {
      show('valid', 'Valid', 'Your browser checked the Ed25519 signature over the payload\\u2019s RFC 8785 form (' + r.payload_hash + ') with key ' + r.key_id + ' (' + r.key_status + ')' + (r.warnings.length ? '; warnings: ' + r.warnings.join(', ') : '') + '.');
    } else {
      show('invalid', 'Not valid', 'Your browser found ' + r.reason + ': ' + (REASONS[r.reason] || 'see the SDK\\u2019s reasons') + '.', r.reason);
    }
    return r;
  }

  document.getElementById('recheck').addEventListener('click', function () { check(); });
  window.sigilVerifyPage = { check: check };
  check();
})();
`;
