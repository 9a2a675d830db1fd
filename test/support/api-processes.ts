import { spawn, ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';

const root = resolve(__dirname, '../..');

export const freePort = () =>
  new Promise<number>((res) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => res(port));
    });
  });

/** Real api processes (`scripts/start.js api`, as `npm start` runs it), ready when this resolves. */
export async function startApiProcesses(count: number, env: Record<string, string | undefined>, readyTimeoutMs = 60_000): Promise<{ bases: string[]; stop(): Promise<void> }> {
  const procs: ChildProcess[] = [];
  const bases: string[] = [];
  for (let i = 0; i < count; i++) {
    const port = await freePort();
    procs.push(spawn(process.execPath, [join(root, 'scripts/start.js'), 'api'], { cwd: root, env: { PATH: process.env.PATH, ...env, PORT: String(port) }, stdio: 'ignore' }));
    bases.push(`http://127.0.0.1:${port}`);
  }
  const stop = () => Promise.all(procs.map((p) => new Promise((r) => (p.exitCode !== null ? r(null) : (p.on('exit', r), p.kill('SIGTERM')))))).then(() => undefined);
  try {
    for (const base of bases) {
      const deadline = Date.now() + readyTimeoutMs;
      for (;;) {
        try {
          if ((await fetch(`${base}/readyz`)).status === 200) break;
        } catch {
          /* starting */
        }
        if (Date.now() > deadline) throw new Error(`${base} not ready`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return { bases, stop };
}
