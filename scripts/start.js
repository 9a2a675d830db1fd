#!/usr/bin/env node
// `npm start`, `npm run start:worker`, `npm run bench`, `npm run cli`, `npm run sdk:generate`, `npm run docs:errors`:
// build when the sources are newer than the last build (SWC, about a second), then run the requested role in this
// process. Build output goes to stderr only: stdout belongs to the role (JSON logs, the CLI's
// JSON result).
'use strict';
const { execFileSync } = require('node:child_process');
const { existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');

const root = join(__dirname, '..');
const stamp = join(root, 'dist', '.build-stamp');
const sources = ['apps', 'libs', 'test/bench', '.swcrc', 'package-lock.json'];
const entries = {
  api: 'dist/apps/api/src/main.js',
  worker: 'dist/apps/worker/src/main.js',
  bench: 'dist/test/bench/main.js',
  cli: 'dist/apps/cli/src/main.js',
  'sdk-generate': 'dist/apps/api/src/openapi/generate-sdk-types.js',
  'docs-errors': 'dist/apps/api/src/docs/generate-error-docs.js',
  // `npm ci` runs this (the `prepare` script): build everything `npm start` needs, run nothing.
  build: null,
};

function newestMtime(path) {
  const st = statSync(path);
  // A file's ctime moves when it is renamed or moved in too, so a file that changed name counts as new.
  if (!st.isDirectory()) return Math.max(st.mtimeMs, st.ctimeMs);
  // A directory's own time is not counted: creating a build output inside the sources (the SDK's
  // dist, written by the browser tests' bundle) moved libs/sdk's mtime and made a running test
  // suite rebuild the app under load. Build outputs are not sources.
  let newest = 0;
  for (const name of readdirSync(path)) if (name !== 'dist' && name !== 'node_modules') newest = Math.max(newest, newestMtime(join(path, name)));
  return newest;
}

const isFresh = () => {
  const built = existsSync(stamp) ? statSync(stamp).mtimeMs : 0;
  return Math.max(...sources.map((s) => join(root, s)).filter(existsSync).map(newestMtime)) <= built;
};

// Several processes may start at once (tests, an api beside a worker): one builds, the others
// wait for it, so nobody runs half-written output. mkdir is the atomic test-and-set.
function withBuildLock(fn) {
  const lock = join(root, '.build-lock');
  const started = Date.now();
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
      if (Date.now() - statSync(lock, { throwIfNoEntry: false })?.mtimeMs > 120000) rmSync(lock, { recursive: true, force: true }); // stale
      if (Date.now() - started > 180000) throw new Error('timed out waiting for another build');
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100);
    }
  }
  try {
    fn();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

function buildIfNeeded() {
  if (isFresh()) return;
  withBuildLock(() => {
    if (!isFresh()) build();
  });
}

function build() {
  process.stderr.write('sigil: building (swc)...\n');
  const dirs = ['apps', 'libs', 'test/bench'].filter((d) => existsSync(join(root, d)));
  execFileSync(process.execPath, [require.resolve('@swc/cli/bin/swc.js'), ...dirs, ...'-d dist --config-file .swcrc --quiet'.split(' ')], {
    cwd: root,
    stdio: ['ignore', 2, 2], // the compiler's stdout too goes to our stderr
  });
  writeFileSync(stamp, new Date().toISOString());
}

const role = process.argv[2];
if (!(role in entries)) {
  process.stderr.write(`usage: node scripts/start.js <${Object.keys(entries).join('|')}> [args]\n`);
  process.exit(2);
}
buildIfNeeded();
if (role === 'api' || role === 'build') {
  // The /verify page checks signatures in the visitor's browser with the SDK's browser bundle.
  try {
    require('./sdk-build').ensureSdkBuilt(['browser']);
  } catch (err) {
    process.stderr.write(`sigil: the SDK's browser bundle could not be built (${err.message}); the /verify page will say its in-browser check is unavailable\n`);
  }
}
if (role !== 'build') {
  process.argv.splice(1, 2, join(root, entries[role]));
  require(join(root, entries[role]));
}
