#!/usr/bin/env node
// Makes sure a Chromium exists for the browser tests (test/*.browser.e2e-spec.ts), which drive
// Debian's chromium through playwright-core (playwright's own browser download cannot work on a
// machine that only reaches package registries). Used by jest's global setup (so a fresh clone's
// `npm test` passes) and by .ci/run; `node scripts/ensure-browser.js` runs it alone.
//
// Order: CHROMIUM_PATH if set (it must point at an executable: a wrong path is an error, never
// silently replaced), else /usr/bin/chromium, else Debian's `chromium` installed with apt-get when
// this process is root and apt-get exists (running `apt-get update` first when the package lists
// are empty), else one clear message naming the command to run. It never skips the tests.
'use strict';
const { accessSync, constants, existsSync, readdirSync } = require('node:fs');
const { execFileSync } = require('node:child_process');

const DEFAULT_PATH = '/usr/bin/chromium';
const INSTALL_HINT = 'install Debian\'s chromium (`sudo apt-get update && sudo apt-get install -y chromium`), or set CHROMIUM_PATH to a Chromium or Chrome executable';

/**
 * What to do, from the facts of this machine (pure, so it is unit-tested without touching it).
 * facts: { chromiumPath (the CHROMIUM_PATH value or undefined), isExecutable(path), isRoot, hasAptGet, aptListsEmpty }
 * Returns { action: 'use', path } | { action: 'install', update: boolean, path } | { action: 'fail', message }.
 */
function planBrowser(facts) {
  const configured = facts.chromiumPath;
  if (configured !== undefined && configured !== '') {
    if (facts.isExecutable(configured)) return { action: 'use', path: configured };
    return { action: 'fail', message: `CHROMIUM_PATH=${configured} is not an executable file: point it at a Chromium or Chrome binary, or unset it to use ${DEFAULT_PATH}` };
  }
  if (facts.isExecutable(DEFAULT_PATH)) return { action: 'use', path: DEFAULT_PATH };
  if (facts.isRoot && facts.hasAptGet) return { action: 'install', update: facts.aptListsEmpty, path: DEFAULT_PATH };
  const why = !facts.hasAptGet ? 'apt-get is not available here' : 'this process is not root, so it cannot install it';
  return { action: 'fail', message: `the browser tests need Chromium and ${DEFAULT_PATH} is missing (${why}): ${INSTALL_HINT}` };
}

function isExecutable(path) {
  try {
    accessSync(path, constants.X_OK);
    return !require('node:fs').statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function machineFacts(env = process.env) {
  const aptGet = ['/usr/bin/apt-get', '/bin/apt-get'].find(existsSync);
  let listsEmpty = true;
  try {
    listsEmpty = !readdirSync('/var/lib/apt/lists').some((name) => name.endsWith('_Packages') || name.endsWith('_Packages.lz4'));
  } catch {
    listsEmpty = true;
  }
  return {
    chromiumPath: env.CHROMIUM_PATH,
    isExecutable,
    isRoot: typeof process.getuid === 'function' && process.getuid() === 0,
    hasAptGet: aptGet !== undefined,
    aptListsEmpty: listsEmpty,
  };
}

/** Returns the browser's path, installing Debian's chromium when needed and possible; throws a clear Error otherwise. */
function ensureBrowser({ log = (line) => process.stderr.write(`${line}\n`), facts = machineFacts() } = {}) {
  const plan = planBrowser(facts);
  if (plan.action === 'use') return plan.path;
  if (plan.action === 'fail') throw new Error(plan.message);
  log(`sigil: ${DEFAULT_PATH} is missing: installing Debian's chromium for the browser tests (apt-get${plan.update ? ' update, then' : ''} install -y chromium; once)`);
  const apt = (args) => execFileSync('apt-get', args, { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  try {
    if (plan.update) apt(['update']);
    try {
      apt(['install', '-y', '--no-install-recommends', 'chromium']);
    } catch (err) {
      // Stale lists name package versions the mirror no longer has: refresh once and try again.
      if (plan.update) throw err;
      apt(['update']);
      apt(['install', '-y', '--no-install-recommends', 'chromium']);
    }
  } catch (err) {
    throw new Error(`installing chromium failed (${err.message.split('\n')[0]}): ${INSTALL_HINT}`);
  }
  if (!facts.isExecutable(plan.path)) throw new Error(`apt-get installed chromium but ${plan.path} is still missing: ${INSTALL_HINT}`);
  return plan.path;
}

module.exports = { planBrowser, ensureBrowser, machineFacts, DEFAULT_PATH };

if (require.main === module) {
  try {
    process.stdout.write(`${ensureBrowser()}\n`);
  } catch (err) {
    process.stderr.write(`sigil: ${err.message}\n`);
    process.exit(1);
  }
}
