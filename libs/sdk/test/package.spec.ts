import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import * as vm from 'node:vm';
import * as src from '../src';
import { ServerSigner } from './server-signer';

/**
 * The publishable package: built with tsup (`npm run build:sdk`), `npm pack --dry-run` lists only
 * the built files, README and LICENSE, and each build runs where it is meant to: ESM and CommonJS
 * in plain Node (no transforms), the IIFE with browser globals only, the `sigil` bin in Node.
 */
const SDK = path.resolve(__dirname, '..');
const ROOT = path.resolve(SDK, '../..');
const DIST = path.join(SDK, 'dist');

function run(command: string, args: string[], cwd: string, input?: string) {
  const r = spawnSync(command, args, { cwd, input, encoding: 'utf8', timeout: 120_000, env: { ...process.env, NODE_OPTIONS: '' } });
  if (r.status !== 0) throw new Error(`${command} ${args.join(' ')} exited ${r.status}:\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

// npm as the test was started (`npm test` sets npm_execpath), else the one on PATH.
const npm = (args: string[], cwd: string) =>
  process.env.npm_execpath?.endsWith('.js') ? run(process.execPath, [process.env.npm_execpath, ...args], cwd) : run('npm', args, cwd);

describe('@sigil/sdk package', () => {
  beforeAll(() => {
    // What is missing or older than the sources (one build at a time, files renamed into place).
    run(process.execPath, [path.join(ROOT, 'scripts/sdk-build.js')], ROOT);
  }, 300_000);

  it('npm pack --dry-run lists only the built files, README.md, LICENSE and package.json', () => {
    const [pack] = JSON.parse(npm(['pack', '--dry-run', '--json'], SDK));
    expect(pack.name).toBe('@sigil/sdk');
    expect(pack.version).toBe('0.1.0');
    expect(pack.files.map((f: { path: string }) => f.path).sort()).toEqual([
      'LICENSE',
      'README.md',
      'dist/cli.cjs',
      'dist/index.cjs',
      'dist/index.d.mts',
      'dist/index.d.ts',
      'dist/index.mjs',
      'dist/sigil.browser.js',
      'package.json',
    ]);
  });

  it('declares its entry points, and every one of them exists', () => {
    const pkg = JSON.parse(readFileSync(path.join(SDK, 'package.json'), 'utf8'));
    expect(pkg).toMatchObject({ license: 'Apache-2.0', files: ['dist', 'README.md', 'LICENSE'] });
    expect(pkg.type === undefined || pkg.type === 'commonjs').toBe(true);
    expect(pkg.dependencies).toBeUndefined(); // noble is bundled
    const targets = [pkg.main, pkg.module, pkg.types, pkg.exports['.'].import.default, pkg.exports['.'].import.types, pkg.exports['.'].require.default, pkg.exports['.'].require.types, pkg.exports['./browser']];
    expect(targets).toEqual(['./dist/index.cjs', './dist/index.mjs', './dist/index.d.ts', './dist/index.mjs', './dist/index.d.mts', './dist/index.cjs', './dist/index.d.ts', './dist/sigil.browser.js']);
    for (const t of targets) expect(() => readFileSync(path.join(SDK, t))).not.toThrow();
    expect(pkg.bin).toEqual({ sigil: './dist/cli.cjs' });
    expect(readFileSync(path.join(SDK, pkg.bin.sigil), 'utf8')).toMatch(/^#!\/usr\/bin\/env node\n/);
    expect(readFileSync(path.join(SDK, 'LICENSE'), 'utf8')).toMatch(/Apache License\s+Version 2\.0, January 2004/);
  });

  it('uses nothing Node-only: no require, no node: modules, no Buffer or process in the bundles', () => {
    for (const file of ['index.mjs', 'index.cjs', 'sigil.browser.js']) {
      const code = readFileSync(path.join(DIST, file), 'utf8');
      expect({ file, found: code.match(/\brequire\(|node:|\bBuffer\b|\bprocess\./g) }).toEqual({ file, found: null });
    }
  });

  it('type-checks for consumers resolving it by name, from ESM and from CommonJS (module nodenext)', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'sigil-sdk-consumer-'));
    try {
      mkdirSync(path.join(dir, 'node_modules/@sigil'), { recursive: true });
      symlinkSync(SDK, path.join(dir, 'node_modules/@sigil/sdk'), 'dir');
      const use = `const client = new SigilClient({ baseUrl: 'https://x' });
        const r: CertificateVerification = verifyCertificate({}, { keys: [] });
        const ok: boolean = r.valid && verifyWebhook('', {}, 'whsec_x').valid;
        export const p: Promise<KeysDocument> = client.getSigningKeys();
        export { ok };`;
      writeFileSync(path.join(dir, 'esm.mts'), `import { SigilClient, verifyCertificate, verifyWebhook, type CertificateVerification, type KeysDocument } from '@sigil/sdk';\n${use}`);
      writeFileSync(path.join(dir, 'cjs.cts'), `import { SigilClient, verifyCertificate, verifyWebhook, type CertificateVerification, type KeysDocument } from '@sigil/sdk';\n${use}`);
      const tsc = path.join(ROOT, 'node_modules/typescript/bin/tsc');
      const compilerOptions = { noEmit: true, strict: true, module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', lib: ['es2022', 'dom'], types: [] };
      writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['esm.mts', 'cjs.cts'] }));
      run(process.execPath, [tsc, '-p', 'tsconfig.json'], dir);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  // One genuine and one tampered certificate, signed by the server's own code.
  const server = new ServerSigner();
  const genuine = server.manifest(server.payload());
  const tampered = { ...genuine, payload: { ...genuine.payload, rows: 7 } };
  const fixture = JSON.stringify({ genuine, tampered, keys: server.keysDocument() });
  const script = (load: string) => `${load}
    let input = ''; process.stdin.on('data', (c) => (input += c)).on('end', () => {
      const { genuine, tampered, keys } = JSON.parse(input);
      console.log(JSON.stringify([sdk.verifyCertificate(genuine, keys).valid, sdk.verifyCertificate(tampered, keys).reason, typeof sdk.SigilClient]));
    });`;

  it('works from plain Node as CommonJS and as ESM', () => {
    const cjs = run(process.execPath, ['-e', script(`const sdk = require(${JSON.stringify(path.join(DIST, 'index.cjs'))});`)], ROOT, fixture);
    expect(JSON.parse(cjs)).toEqual([true, 'signature_invalid', 'function']);
    const esm = run(process.execPath, ['--input-type=module', '-e', script(`import * as sdk from ${JSON.stringify(path.join(DIST, 'index.mjs'))};`)], ROOT, fixture);
    expect(JSON.parse(esm)).toEqual([true, 'signature_invalid', 'function']);
  });

  it('the browser bundle defines the global Sigil with browser globals only', () => {
    const code = readFileSync(path.join(DIST, 'sigil.browser.js'), 'utf8');
    // A fresh context has only the language built-ins; add what a browser has and this SDK uses.
    const context = vm.createContext({ TextEncoder, TextDecoder, URLSearchParams, AbortController, crypto: globalThis.crypto, setTimeout, clearTimeout });
    vm.runInContext(code, context);
    // The page parses its data itself; so does this check.
    Object.assign(context, { fixture });
    const check = `(() => {
      const f = JSON.parse(fixture);
      return JSON.stringify([Sigil.verifyCertificate(f.genuine, f.keys), Sigil.verifyCertificate(f.tampered, f.keys), Object.keys(Sigil)]);
    })()`;
    const [ok, bad, names] = JSON.parse(vm.runInContext(check, context) as string) as [object, object, string[]];
    expect(ok).toMatchObject({ valid: true, key_status: 'active' });
    expect(bad).toMatchObject({ valid: false, reason: 'signature_invalid' });
    expect(names.sort()).toEqual(Object.keys(src).sort());
  });
});
