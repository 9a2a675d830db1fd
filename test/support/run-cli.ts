import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';

/**
 * Runs the admin CLI as `npm run cli -- <command>` does (scripts/start.js builds if needed, then
 * runs the `cli` role) in a child process with only the given environment.
 */
const root = resolve(__dirname, '../..');

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** The last stdout line, parsed: the command's one JSON result. */
  json: Record<string, unknown> & { ok?: false; error?: string; message?: string; details?: unknown };
}

export function runCli(env: Record<string, string | undefined>, args: string[]): Promise<CliRun> {
  const child = spawn(process.execPath, [join(root, 'scripts/start.js'), 'cli', ...args], {
    cwd: root,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += String(d)));
  child.stderr.on('data', (d) => (stderr += String(d)));
  return new Promise((res, rej) => {
    child.on('error', rej);
    child.on('close', (code) => {
      const lines = stdout.split('\n').filter(Boolean);
      let json = {} as CliRun['json'];
      try {
        if (lines.length) json = JSON.parse(lines[lines.length - 1]);
      } catch {
        /* the caller asserts on `stdout` */
      }
      res({ code, stdout, stderr, json });
    });
  });
}

/** Exactly one line on stdout, and it is the JSON object; no stack trace anywhere. */
export function expectOneJsonLine(r: CliRun): void {
  expect(r.stdout.trim().split('\n')).toHaveLength(1);
  expect(r.json).toEqual(expect.any(Object));
  expect(r.stderr).not.toMatch(/\n\s+at .+:\d+:\d+/);
}
