import * as path from 'node:path';
import { defineConfig, Options } from 'tsup';

// Paths from this file, so `tsup --config libs/sdk/tsup.config.ts` works from the repo root.
const dir = __dirname;
const entry = path.join(dir, 'src/index.ts');
// scripts/sdk-build.js builds into a temporary directory, then renames each file into dist, so a
// running app or a test never reads a half-written bundle.
const outDir = process.env.SIGIL_SDK_OUT_DIR ?? path.join(dir, 'dist');
// SIGIL_SDK_ONLY=browser,cli builds only those (scripts/sdk-build.js: what is missing or stale).
const only = process.env.SIGIL_SDK_ONLY?.split(',');
const tsconfig = path.join(dir, 'tsconfig.json');
// No `clean`: the builds run in parallel into one directory. `npm run build:clean` (prepublishOnly)
// starts afresh.

// @noble/* are ESM-only; bundling them gives CommonJS users (and jest) a package that just works,
// and keeps noble's configuration (its SHA-512 hook) private to the SDK.
const shared: Options = { tsconfig, outDir, noExternal: [/^@noble\//], target: 'es2020', sourcemap: false, splitting: false, treeshake: true };

const configs: Options[] = [
  {
    ...shared,
    name: 'package',
    entry: { index: entry },
    format: ['esm', 'cjs'],
    platform: 'neutral',
    dts: true,
    outExtension: ({ format }) => ({ js: format === 'esm' ? '.mjs' : '.cjs' }),
    esbuildOptions(options) {
      options.mainFields = ['module', 'main'];
    },
  },
  {
    ...shared,
    name: 'browser',
    // The /verify page loads this with a <script> tag: everything under the global `Sigil`.
    entry: { 'sigil.browser': entry },
    format: ['iife'],
    platform: 'browser',
    globalName: 'Sigil',
    minify: true,
    outExtension: () => ({ js: '.js' }),
  },
  {
    ...shared,
    name: 'cli',
    // The `sigil` command: Node-only (files, process), so it is its own bundle, never in the SDK's.
    entry: { cli: path.join(dir, 'cli/sigil.ts') },
    format: ['cjs'],
    platform: 'node',
    target: 'node20',
    banner: { js: '#!/usr/bin/env node' },
    outExtension: () => ({ js: '.cjs' }),
  },
];

export default defineConfig(only ? configs.filter((c) => only.includes(c.name!)) : configs);
