#!/usr/bin/env node
// Where a benchmark's CPU went, from a V8 .cpuprofile (`node --cpu-prof dist/test/bench/main.js <scenario>`):
//
//   node scripts/cpuprofile-groups.js <file.cpuprofile> [--us-per-op N] [--during <path fragment>]
//
// Each sample counts for the first group its stack reaches, walking up from the frame it was
// taken in (a pg driver callback running a Node stream counts as the pg driver only when no Node
// frame is nearer: the groups are approximate by design). `--during` keeps only the samples between
// the first and the last whose stack holds a file matching the fragment (the run itself, not the
// start-up or the bulk load); `--us-per-op` turns shares into microseconds per operation.
// Chrome's DevTools show the same profile as a tree; this gives the one table docs/benchmarks.md uses.
'use strict';
const { readFileSync } = require('node:fs');

const args = process.argv.slice(2);
const file = args.find((a) => !a.startsWith('--') && !/^\d/.test(a));
const option = (name) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
if (!file) {
  console.error('usage: node scripts/cpuprofile-groups.js <file.cpuprofile> [--us-per-op N] [--during <path fragment>]');
  process.exit(2);
}
const usPerOp = Number(option('--us-per-op') ?? 0);
const during = option('--during');

const profile = JSON.parse(readFileSync(file, 'utf8'));
const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

// Frames recognized where the sample was taken (V8's pseudo-frames and the native calls that matter).
const leafGroups = [
  ['idle', (f) => f.functionName === '(idle)'],
  ['garbage collection', (f) => f.functionName === '(garbage collector)'],
  ['Ed25519', (f) => /^(signOneShot|verifyOneShot)$/.test(f.functionName)],
  ['SHA-256 / HMAC', (f) => /^(hash|digest|Hmac|Hash)$/.test(f.functionName) && (f.url === '' || /hash|crypto/.test(f.url))],
  ['socket writes', (f) => /^(writev|writeBuffer|writeUtf8String|writeLatin1String)$/.test(f.functionName)],
];
// Frames recognized on the way up, by the file they are in.
const stackGroups = [
  ['RFC 8785', /canonicaliz|canonical-json/],
  ['pg driver', /node_modules\/(pg|pg-protocol|pg-types|pg-pool|postgres-[a-z]+)\//],
  ['event store', /libs\/event-store\//],
  ['idempotency', /libs\/idempotency\//],
  ['commerce', /libs\/commerce\//],
  ['webhooks', /libs\/webhooks\//],
  ['notary', /libs\/notary\//],
  ['registry', /libs\/registry\//],
  ['access and rate limits', /libs\/(access|rate-limit)\//],
  ['ioredis and BullMQ', /node_modules\/(ioredis|bullmq|@ioredis)\//],
  ['HTTP: Fastify, Nest, node:http', /node_modules\/(fastify|@fastify|@nestjs|find-my-way|light-my-request|avvio|rxjs)\/|node:_http|_http_/],
  ['zod', /node_modules\/zod\//],
  ['other application code', /\/(dist|libs|apps)\//],
  ['Node internals', /^node:|^internal/],
];

const memo = new Map();
function groupOf(id) {
  let group = memo.get(id);
  if (group) return group;
  const leaf = nodes.get(id).callFrame;
  group = leafGroups.find(([, test]) => test(leaf))?.[0];
  for (let cur = id; !group && cur !== undefined; cur = parent.get(cur)) {
    const url = nodes.get(cur).callFrame.url;
    if (url) group = stackGroups.find(([, re]) => re.test(url))?.[0];
  }
  group ??= /runMicrotasks|processTicksAndRejections|\(program\)/.test(leaf.functionName) ? 'Node internals' : 'native, unattributed';
  memo.set(id, group);
  return group;
}

function holds(id, fragment) {
  for (let cur = id; cur !== undefined; cur = parent.get(cur)) if (nodes.get(cur).callFrame.url.includes(fragment)) return true;
  return false;
}

let first = 0;
let last = profile.samples.length - 1;
if (during) {
  first = profile.samples.findIndex((id) => holds(id, during));
  if (first < 0) {
    console.error(`no sample holds ${during}`);
    process.exit(1);
  }
  while (last > first && !holds(profile.samples[last], during)) last--;
}

const totals = new Map();
let all = 0;
for (let i = first; i <= last; i++) {
  const dt = profile.timeDeltas[i] ?? 0;
  const group = groupOf(profile.samples[i]);
  totals.set(group, (totals.get(group) ?? 0) + dt);
  all += dt;
}
const busy = all - (totals.get('idle') ?? 0);
console.log(`${(all / 1e6).toFixed(1)} s of samples, ${((busy / all) * 100).toFixed(1)}% busy; shares of the busy time:`);
for (const [group, t] of [...totals].filter(([g]) => g !== 'idle').sort((a, b) => b[1] - a[1])) {
  const share = `${((t / busy) * 100).toFixed(1)}%`.padStart(6);
  console.log(`${share}${usPerOp ? `${String(Math.round((t / busy) * usPerOp)).padStart(6)} µs` : ''}  ${group}`);
}
