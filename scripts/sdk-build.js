#!/usr/bin/env node
// Builds libs/sdk (tsup) when its outputs are missing or older than its sources, for `npm run
// build:sdk`, `npm start` (the /verify page's browser bundle), `npx sigil` (the CLI) and tests.
// One process builds at a time (a lock directory); the others wait, then find the files fresh.
// The build goes to a temporary directory and each file is renamed into dist, so a reader (a
// running app, a spawned CLI) never sees a half-written file. Build output goes to stderr.
//
//   node scripts/sdk-build.js [package|browser|cli ...]   (default: all three)
'use strict';
const { execFileSync } = require('node:child_process');
const { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } = require('node:fs');
const { join } = require('node:path');

const root = join(__dirname, '..');
const sdk = join(root, 'libs/sdk');
const dist = join(sdk, 'dist');
const TARGETS = {
  package: ['index.mjs', 'index.cjs', 'index.d.ts', 'index.d.mts'],
  browser: ['sigil.browser.js'],
  cli: ['cli.cjs'],
};
const SOURCES = ['src', 'cli', 'tsup.config.ts', 'tsconfig.json', 'package.json'].map((s) => join(sdk, s));

function newestMtime(path) {
  const st = statSync(path);
  if (!st.isDirectory()) return st.mtimeMs;
  let newest = st.mtimeMs;
  for (const name of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, name)));
  return newest;
}

/** The targets whose files are missing or older than the newest source. */
function staleTargets(targets) {
  const sources = Math.max(...SOURCES.filter(existsSync).map(newestMtime));
  return targets.filter((t) => TARGETS[t].some((f) => !existsSync(join(dist, f)) || statSync(join(dist, f)).mtimeMs < sources));
}

function withLock(fn) {
  const lock = join(root, '.sdk-build-lock');
  const started = Date.now();
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
      if (Date.now() - (statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now()) > 180000) rmSync(lock, { recursive: true, force: true }); // stale
      if (Date.now() - started > 300000) throw new Error('timed out waiting for another SDK build');
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100);
    }
  }
  try {
    return fn();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

function build(targets) {
  const tmp = join(sdk, `.build-${process.pid}-${Date.now()}`);
  process.stderr.write(`sigil: building the SDK (${targets.join(', ')})...\n`);
  try {
    execFileSync(process.execPath, [require.resolve('tsup/dist/cli-default.js', { paths: [root] }), '--config', join(sdk, 'tsup.config.ts'), '--silent'], {
      cwd: root,
      env: { ...process.env, SIGIL_SDK_OUT_DIR: tmp, SIGIL_SDK_ONLY: targets.join(',') },
      stdio: ['ignore', 2, 2],
    });
    mkdirSync(dist, { recursive: true });
    for (const t of targets) for (const f of TARGETS[t]) renameSync(join(tmp, f), join(dist, f));
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** Builds what is missing or stale among `targets`; returns the targets it built. Throws when the build fails. */
function ensureSdkBuilt(targets = Object.keys(TARGETS)) {
  for (const t of targets) if (!TARGETS[t]) throw new Error(`unknown SDK build target ${t}`);
  if (staleTargets(targets).length === 0) return [];
  return withLock(() => {
    const stale = staleTargets(targets);
    if (stale.length > 0) build(stale);
    return stale;
  });
}

module.exports = { ensureSdkBuilt, SDK_DIST: dist };

if (require.main === module) {
  try {
    ensureSdkBuilt(process.argv.length > 2 ? process.argv.slice(2) : undefined);
  } catch (err) {
    process.stderr.write(`sigil: SDK build failed: ${err.message}\n`);
    process.exit(1);
  }
}
