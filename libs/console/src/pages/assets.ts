/**
 * The console's stylesheet and script, served from /console/assets (same origin, so the CSP
 * allows them without 'unsafe-inline'). Every page works without the script: it only adds the
 * time-left countdown and the in-browser check of a timeline with the SDK bundle.
 */
export const CONSOLE_STYLE = `
:root { color-scheme: light dark; --fg: #1b1f24; --bg: #fff; --muted: #5b636e; --line: #d0d7de; --ok: #116329; --bad: #a40e26; --accent: #0b57d0; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6edf3; --bg: #0d1117; --muted: #9aa4af; --line: #30363d; --ok: #3fb950; --bad: #ff7b72; --accent: #79b8ff; } }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, sans-serif; color: var(--fg); background: var(--bg); }
a { color: var(--accent); }
:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
.skip { position: absolute; left: -999px; } .skip:focus { left: 8px; top: 8px; background: var(--bg); padding: 4px 8px; }
header { display: flex; flex-wrap: wrap; gap: 8px 16px; align-items: center; padding: 8px 16px; border-bottom: 1px solid var(--line); }
.brand { font-weight: 700; text-decoration: none; }
nav { display: flex; flex-wrap: wrap; gap: 8px 16px; align-items: center; flex: 1; }
nav ul { display: flex; flex-wrap: wrap; gap: 8px 16px; list-style: none; margin: 0; padding: 0; }
.who { margin: 0; color: var(--muted); } .role { border: 1px solid var(--line); border-radius: 4px; padding: 0 4px; font-size: 0.85em; }
main { padding: 16px; max-width: 1100px; margin: 0 auto; }
h1 { font-size: 1.5rem; margin: 0 0 12px; overflow-wrap: anywhere; }
h2, li, p { overflow-wrap: anywhere; }
.flash { padding: 8px 12px; border-radius: 6px; border: 1px solid var(--line); } .flash.ok { border-color: var(--ok); } .flash.error { border-color: var(--bad); color: var(--bad); }
form.inline { display: inline; }
label { display: block; margin: 8px 0 2px; font-weight: 600; }
input, select, textarea, button { font: inherit; max-width: 100%; }
input[type=text], input[type=email], input[type=password], input[type=number], input[type=datetime-local], select, textarea { width: 100%; padding: 6px 8px; border: 1px solid var(--line); border-radius: 6px; background: var(--bg); color: var(--fg); }
button { padding: 6px 14px; border-radius: 6px; border: 1px solid var(--line); background: var(--accent); color: #fff; cursor: pointer; }
button.secondary { background: transparent; color: var(--fg); } button.danger { background: var(--bad); }
.card { border: 1px solid var(--line); border-radius: 8px; padding: 12px; margin: 12px 0; }
.card h2 { font-size: 1.1rem; margin: 0 0 8px; overflow-wrap: anywhere; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; margin: 0 0 8px; } dl.facts dt { color: var(--muted); } dl.facts dd { margin: 0; overflow-wrap: anywhere; }
.actions { display: flex; flex-wrap: wrap; gap: 12px; } .actions form { flex: 1 1 240px; border-top: 1px solid var(--line); padding-top: 8px; }
.table-wrap { overflow-x: auto; } table { border-collapse: collapse; width: 100%; } th, td { text-align: left; padding: 6px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
.filters { display: grid; grid-template-columns: repeat(auto-fit, minmax(150px, 1fr)); gap: 8px; align-items: end; }
code, .hash { font-family: ui-monospace, monospace; font-size: 0.85em; overflow-wrap: anywhere; }
.verdict.valid { color: var(--ok); } .verdict.invalid { color: var(--bad); }
ol.timeline { list-style: none; padding: 0; } ol.timeline li { border-left: 3px solid var(--line); padding: 4px 0 12px 12px; margin-left: 4px; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; font-size: 0.85em; }
/* Forms' messages per field, checkbox lists, and policy diffs (webhooks, policies, certificates pages). */
.form-errors { border: 1px solid var(--bad); border-radius: 6px; padding: 8px 12px; margin: 8px 0; } .field-error { color: var(--bad); margin: 2px 0 8px; }
[aria-invalid=true] { border-color: var(--bad); } fieldset { border: 1px solid var(--line); border-radius: 6px; margin: 8px 0; }
ul.checks { list-style: none; padding: 0; margin: 0; display: grid; grid-template-columns: repeat(auto-fit, minmax(220px, 1fr)); gap: 2px 12px; } label.inline { display: inline; font-weight: 400; margin-left: 4px; }
pre.diff ins { text-decoration: none; color: var(--ok); } pre.diff del { text-decoration: none; color: var(--bad); } main h1 { overflow-wrap: anywhere; }
`;

export const CONSOLE_SCRIPT = `'use strict';
(function () {
  // Time left on the approval queue, counted down without reloading.
  function tick() {
    var now = Date.now();
    document.querySelectorAll('[data-expires-at]').forEach(function (el) {
      var ms = Date.parse(el.getAttribute('data-expires-at')) - now;
      if (isNaN(ms)) return;
      if (ms <= 0) { el.textContent = 'expired'; return; }
      var m = Math.ceil(ms / 60000);
      el.textContent = m < 60 ? m + ' min' : Math.floor(m / 60) + ' h ' + (m % 60) + ' min';
    });
  }
  document.addEventListener('DOMContentLoaded', function () {
    tick();
    setInterval(tick, 15000);
  });
})();
`;
