import { mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { SdkBundle } from './sdk-bundle';

describe('SdkBundle', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'sigil-bundle-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('is unavailable while the bundle is not built', () => {
    const sut = new SdkBundle(join(dir, 'sigil.browser.js'));
    expect(sut.current()).toBeNull();
    expect(sut.url()).toBeNull();
    expect(new SdkBundle(null).url()).toBeNull();
  });

  it('serves the file under an address versioned by its content, and follows a rebuild', () => {
    const file = join(dir, 'sigil.browser.js');
    writeFileSync(file, 'var Sigil = 1;');
    const sut = new SdkBundle(file);
    const first = sut.current()!;
    expect(first.body.toString()).toBe('var Sigil = 1;');
    expect(sut.url()).toBe(`/assets/sigil.browser.js?v=${first.version}`);
    expect(first.version).toMatch(/^[0-9a-f]{16}$/);
    writeFileSync(file, 'var Sigil = 22;');
    utimesSync(file, new Date(), new Date(Date.now() + 5000));
    expect(sut.current()!.body.toString()).toBe('var Sigil = 22;');
    expect(sut.current()!.version).not.toBe(first.version);
  });

  it('finds libs/sdk/dist of the checkout, not the compiled dist/libs/sdk', () => {
    const root = resolve(__dirname, '../../../..');
    expect(SdkBundle.locate(__dirname)).toBe(join(root, 'libs/sdk/dist/sigil.browser.js'));
    expect(SdkBundle.locate(join(root, 'dist/libs/notary/src/http'))).toBe(join(root, 'libs/sdk/dist/sigil.browser.js'));
  });
});
