import * as path from 'node:path';
import { defineConfig, Options } from 'tsup';

// Paths from this file, so `tsup --config libs/sdk/tsup.config.ts` works from the repo root.
const dir = __dirname;
const entry = path.join(dir, 'src/index.ts');
const outDir = path.join(dir, 'dist');
const tsconfig = path.join(dir, 'tsconfig.json');
// No `clean`: the two builds run in parallel, and a running app may be serving the browser
// bundle; files are overwritten in place. `npm run build:clean` (prepublishOnly) starts afresh.

// @noble/* are ESM-only; bundling them gives CommonJS users (and jest) a package that just works,
// and keeps noble's configuration (its SHA-512 hook) private to the SDK.
const shared: Options = { tsconfig, outDir, noExternal: [/^@noble\//], target: 'es2020', sourcemap: false, splitting: false, treeshake: true };

export default defineConfig([
  {
    ...shared,
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
    // The /verify page loads this with a <script> tag: everything under the global `Sigil`.
    entry: { 'sigil.browser': entry },
    format: ['iife'],
    platform: 'browser',
    globalName: 'Sigil',
    minify: true,
    outExtension: () => ({ js: '.js' }),
  },
]);
