// Jest global setup: before any test runs, make an initialized PGlite data directory for the
// embedded databases to start from (PGLITE_TEMPLATE, see pglite-database.ts), and make sure the browser tests have a Chromium
// (scripts/ensure-browser.js: CHROMIUM_PATH, /usr/bin/chromium, or Debian's package installed
// when root). Runs only when the run includes a browser spec, so `npm test -- libs/crypto` never
// installs a browser. A failure stops the run with one message; nothing is skipped.
'use strict';
const { join } = require('node:path');
const { existsSync, readdirSync, readFileSync, renameSync, writeFileSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { ensureBrowser } = require('../../scripts/ensure-browser');

/**
 * The tarball of a new PGlite data directory (initdb done, nothing else), kept in the system's
 * temporary directory per PGlite version and made once: every embedded database of the run loads
 * it instead of running initdb again (7 s of CPU each on the CI machine).
 */
async function pgliteTemplate() {
  const root = join(__dirname, '../../node_modules/@electric-sql/pglite');
  const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const file = join(tmpdir(), `sigil-pglite-template-${version}.tar`);
  if (existsSync(file)) return file;
  const { PGlite } = await import('@electric-sql/pglite');
  const pg = await PGlite.create();
  const tarball = await pg.dumpDataDir('none');
  await pg.close();
  // Written whole, then renamed: a concurrent run never reads half a file.
  const partial = `${file}.${process.pid}`;
  writeFileSync(partial, Buffer.from(await tarball.arrayBuffer()));
  renameSync(partial, file);
  return file;
}

module.exports = async function globalSetup(globalConfig) {
  // Workers start after this and inherit the environment.
  process.env.PGLITE_TEMPLATE = await pgliteTemplate();
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
