import { createServer, IncomingHttpHeaders, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

/** How the receiver answers a request on one path: status (and headers, body), or a hang. */
export type Behaviour = (n: number, req: Received) => { status: number; headers?: Record<string, string>; body?: string } | 'hang';

const noContent: Behaviour = () => ({ status: 204 });

/**
 * A real HTTP receiver on 127.0.0.1 for webhook tests. Each path gets its own behaviour
 * (default: 204), and every request is kept in order of arrival.
 */
export class WebhookReceiver {
  readonly received: Received[] = [];
  private readonly behaviours = new Map<string, Behaviour>();
  private readonly counts = new Map<string, number>();
  private readonly hanging = new Set<ServerResponse>();
  private server!: Server;
  port = 0;

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const path = (req.url ?? '/').split('?')[0];
        const r: Received = { path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
        this.received.push(r);
        const n = (this.counts.get(path) ?? 0) + 1;
        this.counts.set(path, n);
        const answer = (this.behaviours.get(path) ?? noContent)(n, r);
        if (answer === 'hang') {
          this.hanging.add(res);
          return;
        }
        res.writeHead(answer.status, answer.headers ?? {});
        res.end(answer.body ?? '');
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  /** A fresh path (so tests never see each other's requests) with its behaviour. */
  route(name: string, behaviour?: Behaviour): { path: string; url: string } {
    const path = `/${name}-${Math.random().toString(36).slice(2, 10)}`;
    if (behaviour) this.behaviours.set(path, behaviour);
    return { path, url: `http://127.0.0.1:${this.port}${path}` };
  }

  on(path: string): Received[] {
    return this.received.filter((r) => r.path === path);
  }

  async close(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** Polls until `check` returns a truthy value, or fails after `timeoutMs`. */
export async function eventually<T>(check: () => T | Promise<T>, timeoutMs = 15_000, what = 'condition'): Promise<Exclude<T, false | null | undefined | 0 | ''>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v) return v as Exclude<T, false | null | undefined | 0 | ''>;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
