// Jest global setup: before any test runs, make sure the browser tests have a Chromium
// (scripts/ensure-browser.js: CHROMIUM_PATH, /usr/bin/chromium, or Debian's package installed
// when root). Runs only when the run includes a browser spec, so `npm test -- libs/crypto` never
// installs a browser. A failure stops the run with one message; nothing is skipped.
'use strict';
const { join } = require('node:path');
const { readdirSync } = require('node:fs');
const { ensureBrowser } = require('../../scripts/ensure-browser');

module.exports = async function globalSetup(globalConfig) {
  const testDir = join(__dirname, '..');
  const browserSpecs = readdirSync(testDir).filter((f) => f.endsWith('.browser.e2e-spec.ts')).map((f) => join(testDir, f));
  const patterns = globalConfig.testPathPatterns;
  const selected = patterns && patterns.isSet() ? browserSpecs.filter((p) => patterns.toExecutor({ rootDir: globalConfig.rootDir }).isMatch(p)) : browserSpecs;
  if (selected.length === 0) return;
  try {
    // Workers start after this and inherit the environment: the specs launch exactly this browser.
    process.env.CHROMIUM_PATH = ensureBrowser();
  } catch (err) {
    // One line, no stack: the message is the whole story (what is missing, the command to run).
    process.stderr.write(`\nsigil: the browser tests cannot run: ${err.message}\n`);
    process.exit(1);
  }
};
