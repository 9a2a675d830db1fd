import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

// scripts/ensure-browser.js is plain CommonJS shared with jest's global setup and .ci/run.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { planBrowser, DEFAULT_PATH } = require('../../scripts/ensure-browser') as {
  planBrowser: (facts: Facts) => { action: string; path?: string; update?: boolean; message?: string };
  DEFAULT_PATH: string;
};

interface Facts {
  chromiumPath: string | undefined;
  isExecutable: (path: string) => boolean;
  isRoot: boolean;
  hasAptGet: boolean;
  aptListsEmpty: boolean;
}

const facts = (over: Partial<Facts> & { present?: string[] }): Facts => ({
  chromiumPath: undefined,
  isExecutable: (p) => (over.present ?? []).includes(p),
  isRoot: true,
  hasAptGet: true,
  aptListsEmpty: false,
  ...over,
});

describe('the browser the browser tests use (scripts/ensure-browser.js)', () => {
  it('uses CHROMIUM_PATH when it points at an executable, before /usr/bin/chromium', () => {
    expect(planBrowser(facts({ chromiumPath: '/opt/chrome/chrome', present: ['/opt/chrome/chrome', DEFAULT_PATH] }))).toEqual({ action: 'use', path: '/opt/chrome/chrome' });
  });

  it('refuses a CHROMIUM_PATH that points at nothing, naming it, rather than installing something else', () => {
    const plan = planBrowser(facts({ chromiumPath: '/nowhere/chromium', present: [DEFAULT_PATH] }));
    expect(plan.action).toBe('fail');
    expect(plan.message).toContain('CHROMIUM_PATH=/nowhere/chromium');
  });

  it('uses /usr/bin/chromium when it is there', () => {
    expect(planBrowser(facts({ present: [DEFAULT_PATH] }))).toEqual({ action: 'use', path: DEFAULT_PATH });
  });

  it("installs Debian's chromium as root with apt-get, updating the package lists first only when they are empty", () => {
    expect(planBrowser(facts({ aptListsEmpty: false }))).toEqual({ action: 'install', update: false, path: DEFAULT_PATH });
    expect(planBrowser(facts({ aptListsEmpty: true }))).toEqual({ action: 'install', update: true, path: DEFAULT_PATH });
  });

  it('stops with the command to run when it cannot install (not root, or no apt-get)', () => {
    for (const f of [facts({ isRoot: false }), facts({ hasAptGet: false })]) {
      const plan = planBrowser(f);
      expect(plan.action).toBe('fail');
      expect(plan.message).toContain('apt-get install -y chromium');
      expect(plan.message).toContain('CHROMIUM_PATH');
    }
  });

  it('run as a command with CHROMIUM_PATH pointing at nothing: exit 1 and one clear line', async () => {
    const run = promisify(execFile)(process.execPath, [join(__dirname, '../../scripts/ensure-browser.js')], { env: { ...process.env, CHROMIUM_PATH: '/nowhere/chromium' } });
    await expect(run).rejects.toMatchObject({ code: 1, stderr: expect.stringMatching(/^sigil: CHROMIUM_PATH=\/nowhere\/chromium is not an executable file/) });
  });
});
