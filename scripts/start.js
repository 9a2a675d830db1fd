#!/usr/bin/env node
// `npm start`, `npm run start:worker`, `npm run bench`: build when the sources are newer than
// the last build (SWC, about a second), then run the requested role in this process.
'use strict';
const { execFileSync } = require('node:child_process');
const { existsSync, readdirSync, statSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');

const root = join(__dirname, '..');
const stamp = join(root, 'dist', '.build-stamp');
const sources = ['apps', 'libs', 'test/bench', '.swcrc', 'package-lock.json'];
const entries = {
  api: 'dist/apps/api/src/main.js',
  worker: 'dist/apps/worker/src/main.js',
  bench: 'dist/test/bench/main.js',
};

function newestMtime(path) {
  const st = statSync(path);
  if (!st.isDirectory()) return st.mtimeMs;
  let newest = st.mtimeMs;
  for (const name of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, name)));
  return newest;
}

function buildIfNeeded() {
  const built = existsSync(stamp) ? statSync(stamp).mtimeMs : 0;
  const newest = Math.max(...sources.map((s) => join(root, s)).filter(existsSync).map(newestMtime));
  if (newest <= built) return;
  process.stderr.write('sigil: building (swc)...\n');
  const dirs = ['apps', 'libs', 'test/bench'].filter((d) => existsSync(join(root, d)));
  execFileSync(process.execPath, [require.resolve('@swc/cli/bin/swc.js'), ...dirs, ...'-d dist --config-file .swcrc --quiet'.split(' ')], {
    cwd: root,
    stdio: 'inherit',
  });
  writeFileSync(stamp, new Date().toISOString());
}

const role = process.argv[2];
if (!entries[role]) {
  process.stderr.write(`usage: node scripts/start.js <${Object.keys(entries).join('|')}> [args]\n`);
  process.exit(2);
}
buildIfNeeded();
process.argv.splice(1, 2, join(root, entries[role]));
require(join(root, entries[role]));
