/**
 * The HTTP load generator, run as its own process (forked by `runHttpLoad` in http-load.ts), so
 * that generating requests does not take the api's JS thread. It keeps one keep-alive socket per
 * concurrent client, writes each request as prepared bytes and reads the response with a
 * minimal HTTP/1.1 parser (status, Content-Length or chunked body): a few microseconds per
 * request, where `fetch` costs the caller more than the api spends serving a verification.
 *
 * Input (one IPC message): an HttpLoadSpec. Output: one HttpLoadOutcome message, then exit.
 */
import { connect, Socket } from 'node:net';
import { performance } from 'node:perf_hooks';

export interface HttpLoadSpec {
  /** `http://host:port` */
  url: string;
  /** More addresses of the same service (other api processes): client i connects to [url, ...urls][i % n]. */
  urls?: string[];
  method: 'GET' | 'POST';
  /** May contain `{op}` and `{ip}`. */
  path: string;
  /** When given, operation `op` requests `paths[op % paths.length]` instead of `path`. */
  paths?: string[];
  /** Sent on every request; values may contain `{op}` and `{ip}`. */
  headers: Record<string, string>;
  /** Extra headers of client `i` (e.g. its own API key), by client index. */
  clientHeaders?: Record<string, string>[];
  /** May contain `{op}` and `{ip}`. */
  body?: string;
  /** The status every response must have. */
  expectStatus: number;
  /** A substring every response body must contain (e.g. `"verified":true`). */
  expectBody?: string;
  operations: number;
  /** Connections; without `ratePerS` each keeps one request in flight at all times (a closed loop). */
  concurrency: number;
  /**
   * Offered load (an open loop): operation i is due at start + i / ratePerS, sent on the first
   * free connection, and its latency counts from when it was due, so time spent waiting for a
   * connection is counted (no coordinated omission).
   */
  ratePerS?: number;
  /** Operation numbers start here (warm-up and measured runs use distinct client IPs). */
  opOffset?: number;
  label: string;
  progressMs?: number;
}

/** The messages the client sends: `{ started: true }` when the measured run begins, then the outcome. */
export interface HttpLoadOutcome {
  failedOps: number;
  firstError?: string;
  elapsedMs: number;
  /** Latency per completed operation, ms, in completion order. */
  latenciesMs: number[];
  /** This process's CPU over the run, % of one core. */
  cpuPct: number;
}

/** A distinct client IP per operation (sent as X-Forwarded-For), so per-IP limits count but never bind. */
export const clientIp = (op: number): string => `10.${(op >> 16) & 255}.${(op >> 8) & 255}.${op & 255}`;

const fill = (template: string, op: number): string =>
  template.includes('{') ? template.replaceAll('{op}', String(op)).replaceAll('{ip}', clientIp(op)) : template;

function requestBytes(spec: HttpLoadSpec, host: string, client: number, op: number): Buffer {
  const body = spec.body === undefined ? undefined : Buffer.from(fill(spec.body, op));
  const path = spec.paths?.length ? spec.paths[op % spec.paths.length] : spec.path;
  let head = `${spec.method} ${fill(path, op)} HTTP/1.1\r\nhost: ${host}\r\n`;
  for (const [k, v] of Object.entries(spec.headers)) head += `${k}: ${fill(v, op)}\r\n`;
  for (const [k, v] of Object.entries(spec.clientHeaders?.[client] ?? {})) head += `${k}: ${fill(v, op)}\r\n`;
  if (body) head += `content-length: ${body.length}\r\n`;
  head += '\r\n';
  return body ? Buffer.concat([Buffer.from(head), body]) : Buffer.from(head);
}

interface Parsed {
  status: number;
  body: Buffer;
  /** Bytes of the buffer this response used. */
  used: number;
}

const HEAD_END = Buffer.from('\r\n\r\n');

/** One complete response at the start of `buf`, or null when more bytes are needed. */
function parseResponse(buf: Buffer): Parsed | null {
  const headEnd = buf.indexOf(HEAD_END);
  if (headEnd < 0) return null;
  const head = buf.toString('latin1', 0, headEnd);
  const status = Number(head.slice(9, 12));
  const lower = head.toLowerCase();
  const start = headEnd + 4;
  const cl = /\r\ncontent-length:\s*(\d+)/.exec(lower);
  if (cl) {
    const end = start + Number(cl[1]);
    return buf.length < end ? null : { status, body: buf.subarray(start, end), used: end };
  }
  if (!/\r\ntransfer-encoding:\s*chunked/.test(lower)) throw new Error(`response without Content-Length or chunked body: ${head.split('\r\n')[0]}`);
  const parts: Buffer[] = [];
  let at = start;
  for (;;) {
    const lineEnd = buf.indexOf('\r\n', at);
    if (lineEnd < 0) return null;
    const size = parseInt(buf.toString('latin1', at, lineEnd), 16);
    const chunkEnd = lineEnd + 2 + size;
    if (buf.length < chunkEnd + 2) return null;
    if (size === 0) {
      // No trailers are sent by the api: the final CRLF follows the last chunk.
      return { status, body: Buffer.concat(parts), used: chunkEnd + 2 };
    }
    parts.push(buf.subarray(lineEnd + 2, chunkEnd));
    at = chunkEnd + 2;
  }
}

/** A keep-alive connection that sends one request at a time. */
class Connection {
  private buf: Buffer = Buffer.alloc(0);
  private pending: { resolve: (p: Parsed) => void; reject: (e: Error) => void } | null = null;
  private failure: Error | null = null;

  private constructor(private readonly socket: Socket) {
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => {
      this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
      if (!this.pending) return;
      let parsed: Parsed | null;
      try {
        parsed = parseResponse(this.buf);
      } catch (err) {
        return this.fail(err as Error);
      }
      if (!parsed) return;
      this.buf = this.buf.subarray(parsed.used);
      const p = this.pending;
      this.pending = null;
      p.resolve(parsed);
    });
    socket.on('error', (err) => this.fail(err));
    socket.on('close', () => this.fail(new Error('connection closed by the server')));
  }

  static open(host: string, port: number): Promise<Connection> {
    return new Promise((resolve, reject) => {
      const socket = connect({ host, port }, () => {
        socket.off('error', reject);
        resolve(new Connection(socket));
      });
      socket.once('error', reject);
    });
  }

  private fail(err: Error): void {
    this.failure ??= err;
    const p = this.pending;
    this.pending = null;
    p?.reject(err);
  }

  request(bytes: Buffer): Promise<Parsed> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      this.pending = { resolve, reject };
      this.socket.write(bytes);
    });
  }

  close(): void {
    this.socket.removeAllListeners('close');
    this.socket.destroy();
  }
}

async function run(spec: HttpLoadSpec): Promise<HttpLoadOutcome> {
  const targets = [spec.url, ...(spec.urls ?? [])].map((u) => new URL(u));
  const clients = Math.min(spec.concurrency, spec.operations);
  const conns = await Promise.all(Array.from({ length: clients }, (_, i) => Connection.open(targets[i % targets.length].hostname, Number(targets[i % targets.length].port))));
  const host = targets[0].host;
  const expectBody = spec.expectBody === undefined ? null : Buffer.from(spec.expectBody);
  const offset = spec.opOffset ?? 0;
  const latencies: number[] = [];
  let next = 0;
  let failedOps = 0;
  let firstError: string | undefined;
  const progressMs = spec.progressMs ?? 2000;
  // The parent starts measuring the api now.
  process.send?.({ started: true });
  const cpu0 = process.cpuUsage();
  const start = performance.now();
  let lastProgress = start;

  await Promise.all(
    conns.map(async (conn, client) => {
      for (let i = next++; i < spec.operations; i = next++) {
        const op = offset + i;
        const bytes = requestBytes(spec, host, client, op);
        let t0 = performance.now();
        if (spec.ratePerS) {
          const due = start + (i * 1000) / spec.ratePerS;
          // A timer may fire up to a millisecond early (libuv counts whole milliseconds): wait
          // again until it is due, so no request leaves before its time.
          while (performance.now() < due) await new Promise((resolve) => setTimeout(resolve, due - performance.now()));
          t0 = due;
        }
        try {
          const res = await conn.request(bytes);
          if (res.status !== spec.expectStatus || (expectBody && res.body.indexOf(expectBody) < 0)) {
            throw new Error(`status ${res.status}: ${res.body.toString('utf8', 0, Math.min(300, res.body.length))}`);
          }
        } catch (err) {
          failedOps++;
          const message = err instanceof Error ? err.message : String(err);
          if (failedOps <= 5) process.stderr.write(`bench: ${spec.label}: operation ${op} failed: ${message}\n`);
          firstError ??= message;
        }
        const now = performance.now();
        latencies.push(now - t0);
        if (progressMs > 0 && now - lastProgress >= progressMs) {
          lastProgress = now;
          const done = latencies.length;
          process.stderr.write(`bench: ${spec.label}: ${done}/${spec.operations} ops, ${((done - failedOps) / ((now - start) / 1000)).toFixed(0)} ops/s, ${failedOps} failed\n`);
        }
      }
    }),
  );
  const elapsedMs = performance.now() - start;
  const cpu = process.cpuUsage(cpu0);
  for (const c of conns) c.close();
  if (failedOps > 5) process.stderr.write(`bench: ${spec.label}: ${failedOps - 5} more operations failed\n`);
  return { failedOps, firstError, elapsedMs, latenciesMs: latencies, cpuPct: Math.round(((cpu.user + cpu.system) / 1000 / elapsedMs) * 100) };
}

if (require.main === module) {
  process.once('message', (spec: HttpLoadSpec) => {
    run(spec).then(
      (outcome) => process.send!(outcome, () => process.exit(0)),
      (err: unknown) => {
        process.stderr.write(`bench: load generator: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
        process.exit(1);
      },
    );
  });
}
