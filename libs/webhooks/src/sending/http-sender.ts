import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { isTargetProblem, parseTarget } from '../domain/target';
import type { AttemptResult } from '../domain/retry';
import { TargetGuard } from './target-guard';

export const MAX_STORED_RESPONSE_BYTES = 20 * 1024;

/**
 * What a receiver answered, as text PostgreSQL can store: its text columns cannot hold U+0000,
 * so a NUL in a response (or an error) would make the attempt unrecordable, and the delivery
 * would be sent again and again without ever being recorded. Each NUL becomes U+FFFD.
 */
export const storableText = (text: string): string => text.replaceAll('\u0000', '\ufffd');

export interface SendResult extends AttemptResult {
  latencyMs: number;
  /** At most 20 KB of the response body, as text. */
  responseBody: string | null;
}

interface PinnedOptions {
  /** The address the guard checked and the connection goes to. */
  pinnedAddress?: string;
}

/**
 * Keep-alive pools keyed by the checked address as well as host and port: a kept socket is
 * reused only for the very address it was opened to, so a later check that answers another
 * address (DNS changed) gets a new connection to that one, never an old socket.
 */
class PinnedHttpAgent extends http.Agent {
  override getName(options?: http.ClientRequestArgs & PinnedOptions): string {
    return `${super.getName(options)}|${options?.pinnedAddress ?? ''}`;
  }
}

class PinnedHttpsAgent extends https.Agent {
  override getName(options?: https.RequestOptions & PinnedOptions): string {
    return `${super.getName(options)}|${options?.pinnedAddress ?? ''}`;
  }
}

/**
 * POSTs one webhook. The target is resolved and checked (TargetGuard) and the connection goes to
 * the checked address through a custom `lookup`, while the URL keeps the hostname, so the Host
 * header and the TLS servername (SNI, certificate check) are the registered host's. Redirects
 * are not followed: node:http never does. The timeout covers connect, headers and body.
 */
export class HttpSender {
  private readonly agents = {
    'http:': new PinnedHttpAgent({ keepAlive: true, maxSockets: 256 }),
    'https:': new PinnedHttpsAgent({ keepAlive: true, maxSockets: 256 }),
  };

  constructor(
    private readonly guard: TargetGuard,
    private readonly timeoutMs: number,
  ) {}

  async send(rawUrl: string, body: string, headers: Record<string, string>): Promise<SendResult> {
    const started = performance.now();
    const done = (r: Omit<SendResult, 'latencyMs'>): SendResult => ({ ...r, latencyMs: Math.round(performance.now() - started) });
    const target = parseTarget(rawUrl);
    if (isTargetProblem(target)) return done({ statusCode: null, error: target.message, errorKind: 'target_not_allowed', retryAfter: null, responseBody: null });
    const verdict = await this.guard.check(target);
    if (!verdict.ok) {
      // An unresolvable name may be a passing DNS failure: retried like a network error.
      const kind = verdict.kind === 'not_allowed' ? 'target_not_allowed' : 'network';
      return done({ statusCode: null, error: verdict.message, errorKind: kind, retryAfter: null, responseBody: null });
    }
    const pinned = verdict.addresses[0];
    const lookup = ((_host: string, options: { all?: boolean }, cb: (...args: unknown[]) => void) => {
      if (options?.all) cb(null, [pinned]);
      else cb(null, pinned.address, pinned.family);
    }) as unknown as LookupFunction;

    return new Promise<SendResult>((resolve) => {
      let settled = false;
      let statusCode: number | null = null;
      let retryAfter: string | null = null;
      const chunks: Buffer[] = [];
      let stored = 0;
      const finish = (error: string | null, errorKind: AttemptResult['errorKind']) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        const responseBody = statusCode === null ? null : storableText(Buffer.concat(chunks).toString('utf8'));
        // Once the status arrived, the attempt has its answer; a slow body only loses its tail.
        resolve(done(statusCode === null ? { statusCode, error, errorKind, retryAfter, responseBody } : { statusCode, error: null, errorKind: null, retryAfter, responseBody }));
      };
      const mod = target.url.protocol === 'https:' ? https : http;
      const req = mod.request(target.url, <http.RequestOptions & PinnedOptions>{
        method: 'POST',
        agent: this.agents[target.url.protocol as 'http:' | 'https:'],
        lookup,
        pinnedAddress: pinned.address,
        headers: { 'content-type': 'application/json', 'user-agent': 'Sigil-Webhooks/1', 'content-length': String(Buffer.byteLength(body)), ...headers },
      });
      const timer = setTimeout(() => {
        finish(`no response within ${this.timeoutMs} ms`, 'timeout');
        req.destroy();
      }, this.timeoutMs);
      req.on('response', (res) => {
        statusCode = res.statusCode ?? null;
        const ra = res.headers['retry-after'];
        retryAfter = typeof ra === 'string' ? ra : null;
        res.on('data', (chunk: Buffer) => {
          if (stored >= MAX_STORED_RESPONSE_BYTES) return;
          const part = chunk.subarray(0, MAX_STORED_RESPONSE_BYTES - stored);
          chunks.push(part);
          stored += part.length;
          if (stored >= MAX_STORED_RESPONSE_BYTES) {
            finish(null, null);
            res.destroy(); // enough: a receiver cannot make us read without end
          }
        });
        res.on('end', () => finish(null, null));
        res.on('error', () => finish(null, null));
        res.on('close', () => finish(null, null));
      });
      req.on('error', (err: NodeJS.ErrnoException) => finish(storableText(`${err.code ?? 'error'}: ${err.message}`.slice(0, 500)), 'network'));
      req.end(body);
    });
  }

  close(): void {
    this.agents['http:'].destroy();
    this.agents['https:'].destroy();
  }
}
