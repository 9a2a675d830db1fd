import { createHash } from 'node:crypto';

/**
 * The timeline page's in-browser check: the SDK's browser bundle (served by the api at
 * /assets/sigil.browser.js, no CDN) recomputes every hash of the timeline embedded in the page,
 * checks every link, and the signed anchor that ends a terminal timeline against the published
 * signing keys; the page then says whether the chain holds and, if not, which event broke it.
 * Served as a same-origin file (the CSP allows no inline script).
 */
export const TIMELINE_SCRIPT = `'use strict';
(function () {
  function set(out, state, title, detail) {
    out.setAttribute('data-state', state);
    out.querySelector('.title').textContent = title;
    out.querySelector('.detail').textContent = detail;
  }
  function describe(v) {
    var where = typeof v.broken_at_revision === 'number' ? ' at event ' + (v.broken_at_revision + 1) : '';
    var field = v.field ? ' (' + v.field + ')' : '';
    return (v.reason || 'invalid') + where + field;
  }
  document.addEventListener('DOMContentLoaded', function () {
    var data = document.getElementById('timeline-data');
    var out = document.getElementById('browser-verdict');
    if (!data || !out) return;
    var sdk = window.Sigil;
    if (!sdk || typeof sdk.verifyTimeline !== 'function') {
      set(out, 'unavailable', 'In-browser check unavailable', 'the SDK bundle did not load; the server\\u2019s verdict above still stands');
      return;
    }
    var timeline = JSON.parse(data.textContent);
    fetch('/.well-known/signing-keys.json', { credentials: 'omit' })
      .then(function (r) { return r.ok ? r.json() : null; })
      .catch(function () { return null; })
      .then(function (keys) {
        var v = sdk.verifyTimeline(timeline, { keys: keys || undefined, expectedStatus: out.getAttribute('data-status') || undefined });
        if (v.valid) {
          var end = v.anchor ? '; its end: ' + v.anchor.state : '';
          set(out, 'valid', 'Valid in your browser', v.events + ' events, every hash recomputed and every link checked' + end);
        } else {
          out.setAttribute('data-reason', v.reason || '');
          if (typeof v.broken_at_revision === 'number') out.setAttribute('data-broken-at', String(v.broken_at_revision + 1));
          set(out, 'invalid', 'Not valid', describe(v));
        }
      });
  });
})();
`;

export const TIMELINE_SCRIPT_URL = `/console/assets/timeline.js?v=${createHash('sha256').update(TIMELINE_SCRIPT).digest('hex').slice(0, 12)}`;
/** The SDK's browser bundle as the api serves it (built by `npm ci`'s prepare step, or scripts/sdk-build.js). */
export const SDK_BUNDLE_URL = '/assets/sigil.browser.js';

/** JSON for a `<script type="application/json">` element: nothing in it can close the element. */
export const jsonForScript = (value: unknown): string => JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
