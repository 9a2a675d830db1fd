import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The SDK's browser bundle as last read: its bytes and a version (a prefix of their SHA-256). */
export interface BundleFile {
  body: Buffer;
  version: string;
}

/**
 * The SDK's browser bundle (libs/sdk/dist/sigil.browser.js, global `Sigil`), served to the
 * /verify page so the visitor's browser checks the signature itself. `npm start` builds it when
 * it is missing or stale; without it the page says the in-browser check is unavailable.
 * Re-read when the file changes, so a rebuild is served without a restart.
 */
export class SdkBundle {
  private cached: { mtimeMs: number; size: number; file: BundleFile } | null = null;

  constructor(readonly path: string | null) {}

  /**
   * The bundle's path: libs/sdk/dist under the app's root, the nearest ancestor with a package.json
   * (the checkout, or the image's /app). The compiled dist/ has none, nor do the libs.
   */
  static locate(from = __dirname): string | null {
    for (let dir = from; ; dir = dirname(dir)) {
      if (existsSync(join(dir, 'package.json'))) return join(dir, 'libs/sdk/dist/sigil.browser.js');
      if (dirname(dir) === dir) return null;
    }
  }

  /** The bundle, or null when it is not built. */
  current(): BundleFile | null {
    if (!this.path) return null;
    const st = statSync(this.path, { throwIfNoEntry: false });
    if (!st || !st.isFile() || st.size === 0) return null;
    if (this.cached && this.cached.mtimeMs === st.mtimeMs && this.cached.size === st.size) return this.cached.file;
    let body: Buffer;
    try {
      body = readFileSync(this.path);
    } catch {
      return null;
    }
    const file = { body, version: createHash('sha256').update(body).digest('hex').slice(0, 16) };
    this.cached = { mtimeMs: st.mtimeMs, size: st.size, file };
    return file;
  }

  /** The address the page loads it from, versioned so it can be cached for good; null when not built. */
  url(): string | null {
    const file = this.current();
    return file ? `${BUNDLE_ROUTE}?v=${file.version}` : null;
  }
}

export const BUNDLE_ROUTE = '/assets/sigil.browser.js';
