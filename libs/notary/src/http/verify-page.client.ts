/**
 * What the /verify/{id} page runs in the visitor's browser, as plain ES2020 text: the page's CSP
 * allows exactly these bytes by their SHA-256, so nothing here is interpolated per request. The
 * certificate reaches the script as data (the `certificate-data` JSON element).
 */

/**
 * RFC 8785 (JCS) in the browser. Kept as its own text so the unit spec can run it against the
 * RFC 8785 vectors and the server's canonicalJson.
 */
export const CLIENT_JCS = `
function jcs(value) {
  if (Array.isArray(value)) return '[' + value.map(jcs).join(',') + ']';
  if (value !== null && typeof value === 'object') {
    // Array.prototype.sort compares UTF-16 code units, which is the key order JCS requires.
    return '{' + Object.keys(value).sort().map(function (k) { return JSON.stringify(k) + ':' + jcs(value[k]); }).join(',') + '}';
  }
  // JSON.parse turns 1e400 into Infinity: the service refuses to certify such JSON.
  if (typeof value === 'number' && !isFinite(value)) throw new Error('the JSON holds a number out of range');
  // For strings and finite numbers ES serialization is exactly JCS's; true, false and null as is.
  return JSON.stringify(value);
}
`;

export const CLIENT_SCRIPT = `
(function () {
  'use strict';
  ${CLIENT_JCS.trim()}

  var data = JSON.parse(document.getElementById('certificate-data').textContent);
  var certified = data.certificate.payload.dataset_hash;
  var zone = document.getElementById('drop-zone');
  var input = document.getElementById('file-input');
  var result = document.getElementById('file-result');

  function hex(buffer) {
    return Array.from(new Uint8Array(buffer), function (b) { return b.toString(16).padStart(2, '0'); }).join('');
  }

  // The service hashes content that parses as JSON in its RFC 8785 canonical form, and anything
  // else as its raw UTF-8 bytes (digestContent): this does the same, so a pretty-printed copy of
  // certified JSON still matches. The BOM is kept, as the service would keep it (then it is not JSON).
  async function digest(bytes) {
    var text = null;
    try { text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes); } catch (e) { text = null; }
    var parsed = { ok: false, value: null };
    if (text !== null) {
      try { parsed = { ok: true, value: JSON.parse(text) }; } catch (e) { parsed = { ok: false, value: null }; }
    }
    var hashed = parsed.ok ? new TextEncoder().encode(jcs(parsed.value)) : bytes;
    var sum = await crypto.subtle.digest('SHA-256', hashed);
    return { hash: 'sha256:' + hex(sum), method: parsed.ok ? 'JSON, canonicalized (RFC 8785) then SHA-256' : 'SHA-256 of the raw bytes' };
  }

  function show(state, verdict, file, method, hash) {
    result.hidden = false;
    result.setAttribute('data-state', state);
    document.getElementById('file-verdict').textContent = verdict;
    document.getElementById('file-name').textContent = file;
    document.getElementById('file-method').textContent = method;
    document.getElementById('file-hash').textContent = hash;
  }

  async function check(file) {
    if (!file) return;
    if (!window.crypto || !crypto.subtle) {
      show('error', 'Cannot check here', file.name, 'WebCrypto needs a secure context (HTTPS or localhost)', '');
      return;
    }
    show('pending', 'Checking...', file.name, '', '');
    try {
      var d = await digest(new Uint8Array(await file.arrayBuffer()));
      var match = d.hash === certified;
      show(match ? 'match' : 'mismatch', match ? 'Match' : 'No match', file.name, d.method, d.hash);
    } catch (err) {
      show('error', 'No match', file.name, 'cannot be hashed as the service would: ' + (err && err.message), '');
    }
  }

  zone.addEventListener('dragover', function (e) { e.preventDefault(); zone.classList.add('over'); });
  zone.addEventListener('dragleave', function () { zone.classList.remove('over'); });
  zone.addEventListener('drop', function (e) {
    e.preventDefault();
    zone.classList.remove('over');
    var files = e.dataTransfer && e.dataTransfer.files;
    if (files && files.length) check(files[0]);
  });
  // A file dropped beside the zone must not navigate away from the page.
  window.addEventListener('dragover', function (e) { e.preventDefault(); });
  window.addEventListener('drop', function (e) { e.preventDefault(); });
  input.addEventListener('change', function () { check(input.files && input.files[0]); });
})();
`;

export const PAGE_STYLE = `
:root { color-scheme: light dark; --ok: #1a7f37; --bad: #cf222e; --warn: #9a6700; --line: #8884; }
body { font: 16px/1.5 system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; }
h1 { font-size: 1.5rem; margin-bottom: .25rem; }
code, pre { font: 14px/1.4 ui-monospace, monospace; overflow-wrap: anywhere; }
pre { padding: 1rem; border: 1px solid var(--line); border-radius: 6px; overflow-x: auto; }
.verdict { padding: .75rem 1rem; border-radius: 6px; border-left: 6px solid; margin: 1rem 0; }
.verdict.ok { border-color: var(--ok); } .verdict.bad { border-color: var(--bad); }
.verdict strong { font-size: 1.25rem; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; vertical-align: top; padding: .35rem .5rem; border-bottom: 1px solid var(--line); }
th { width: 14rem; font-weight: 600; }
.pass { color: var(--ok); } .fail { color: var(--bad); } .warn { color: var(--warn); } .skipped { opacity: .7; }
#drop-zone { border: 2px dashed var(--line); border-radius: 8px; padding: 2rem 1rem; text-align: center; }
#drop-zone.over { border-color: var(--ok); }
#file-result[data-state=match] #file-verdict { color: var(--ok); }
#file-result[data-state=mismatch] #file-verdict, #file-result[data-state=error] #file-verdict { color: var(--bad); }
#file-verdict { font-size: 1.25rem; font-weight: 700; }
.source { margin: 1rem 0 -.5rem; font-size: .875rem; opacity: .8; }
#browser-verdict { border-color: var(--line); }
#browser-verdict[data-state=valid] { border-color: var(--ok); }
#browser-verdict[data-state=invalid] { border-color: var(--bad); }
#browser-verdict[data-state=unavailable] { border-color: var(--warn); }
`;
