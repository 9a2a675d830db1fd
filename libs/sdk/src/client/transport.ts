import { BASE_DELAY_MS, exponentialDelay, jitter, MAX_ATTEMPTS, MAX_BACKOFF_MS, parseRetryAfter, RETRY_STATUSES } from './backoff';
import { errorFromResponse, SigilError } from './errors';

export interface SigilClientOptions {
  /** e.g. `https://sigil.example.com` (no trailing path needed). */
  baseUrl: string;
  /** `cdp_live_…` or `cdp_test_…`, sent as `Authorization: Bearer`. */
  apiKey?: string;
  /** Defaults to the global fetch (Node 20+, browsers). */
  fetch?: typeof fetch;
  /** Waits between attempts; tests pass a fake. */
  sleep?: (ms: number) => Promise<void>;
  /** A [0, 1) random source for jitter. */
  random?: () => number;
  /** Current time in ms, to read an HTTP-date Retry-After. */
  now?: () => number;
  /** Makes Idempotency-Keys (default crypto.randomUUID). */
  idempotencyKey?: () => string;
  /** Attempts in total, the first included (default 6, the spec's limit). */
  maxAttempts?: number;
  /** First exponential delay (default 500 ms; doubles each attempt, capped at maxBackoffMs). */
  baseDelayMs?: number;
  maxBackoffMs?: number;
  /** A Retry-After longer than this is not waited out: the error is thrown (default 120 s). */
  maxRetryAfterMs?: number;
  /** Per-attempt timeout in ms (default 30 s; 0 turns it off). A timeout counts as a network error. */
  timeoutMs?: number;
  /** Headers sent on every request, e.g. `X-Agent-DID`. */
  headers?: Record<string, string>;
}

export type QueryValue = string | number | boolean | null | undefined;

export interface RequestOptions {
  body?: unknown;
  query?: Record<string, QueryValue>;
  headers?: Record<string, string>;
  /**
   * The Idempotency-Key of this logical call, reused on every retry. State-changing requests get
   * one made once per call when this is omitted; `false` sends none.
   */
  idempotencyKey?: string | false;
  /** A POST that changes nothing (e.g. /api/verify): no Idempotency-Key, and safe to repeat. */
  readOnly?: boolean;
  /**
   * Whether a network error may be retried. Default: for GET/HEAD/OPTIONS, read-only calls and
   * calls carrying an Idempotency-Key, since those cannot act twice.
   */
  retryNetworkErrors?: boolean;
  signal?: AbortSignal;
}

const SAFE_METHODS = ['GET', 'HEAD', 'OPTIONS'];
const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A v4 UUID: crypto.randomUUID where available (secure contexts), else from getRandomValues. */
export function newIdempotencyKey(): string {
  const c = globalThis.crypto;
  if (typeof c?.randomUUID === 'function') return c.randomUUID();
  const b = c.getRandomValues(new Uint8Array(16));
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** Reads a body as the Content-Type says: JSON only when it is JSON, text otherwise. */
async function readBody(res: Response): Promise<{ value: unknown; json: boolean; parseFailed: boolean }> {
  const text = await res.text();
  const type = res.headers.get('content-type') ?? '';
  if (!JSON_TYPE.test(type) || text.length === 0) return { value: text, json: false, parseFailed: false };
  try {
    return { value: JSON.parse(text), json: true, parseFailed: false };
  } catch {
    return { value: text, json: false, parseFailed: true };
  }
}

/**
 * HTTP with the service's backoff contract: SigilClient's typed methods all go through `request`.
 */
export class SigilTransport {
  private readonly baseUrl: string;
  private readonly fetchImpl: typeof fetch;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly random: () => number;
  private readonly now: () => number;
  private readonly makeKey: () => string;
  private readonly maxAttempts: number;

  constructor(private readonly options: SigilClientOptions) {
    if (!options?.baseUrl) throw new TypeError('SigilClient needs a baseUrl');
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    if (!options.fetch && typeof globalThis.fetch !== 'function') throw new TypeError('no fetch available: pass options.fetch');
    // A detached window.fetch throws "Illegal invocation" in browsers.
    this.fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.sleep = options.sleep ?? defaultSleep;
    this.random = options.random ?? Math.random;
    this.now = options.now ?? Date.now;
    this.makeKey = options.idempotencyKey ?? newIdempotencyKey;
    this.maxAttempts = Math.max(1, Math.floor(options.maxAttempts ?? MAX_ATTEMPTS));
  }

  /**
   * One logical call, retried per the backoff contract. Resolves with the parsed JSON (or the text,
   * when the response is not JSON); rejects with SigilError.
   */
  async request<T = unknown>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
    const verb = method.toUpperCase();
    const safe = SAFE_METHODS.includes(verb);
    // fetch refuses these itself; failing here keeps it from looking like a retryable network error.
    if (opts.body !== undefined && (verb === 'GET' || verb === 'HEAD')) throw new TypeError(`a ${verb} request cannot have a body`);
    const idempotencyKey = opts.idempotencyKey === false || safe || opts.readOnly ? undefined : (opts.idempotencyKey ?? this.makeKey());
    const networkRetry = opts.retryNetworkErrors ?? (safe || opts.readOnly === true || idempotencyKey !== undefined);
    const url = this.url(path, opts.query);
    const headers: Record<string, string> = { accept: 'application/json', ...this.options.headers, ...opts.headers };
    if (this.options.apiKey) headers.authorization = `Bearer ${this.options.apiKey}`;
    if (idempotencyKey !== undefined) headers['idempotency-key'] = idempotencyKey;
    const body = opts.body === undefined ? undefined : JSON.stringify(opts.body);
    if (body !== undefined) headers['content-type'] = 'application/json';

    for (let attempt = 1; ; attempt++) {
      opts.signal?.throwIfAborted();
      let res: Response;
      let parsed: Awaited<ReturnType<typeof readBody>>;
      const timeout = this.attemptSignal(opts.signal);
      try {
        res = await this.fetchImpl(url, { method: verb, headers, body, signal: timeout.signal });
        parsed = await readBody(res);
      } catch (err) {
        if (opts.signal?.aborted) throw err;
        const error = new SigilError({
          status: 0,
          code: timeout.timedOut() ? 'timeout' : 'network_error',
          message: timeout.timedOut() ? `no response within ${this.options.timeoutMs ?? 30_000} ms` : `network error: ${(err as Error)?.message ?? String(err)}`,
          retryable: networkRetry,
          attempts: attempt,
          cause: err,
        });
        if (!networkRetry || attempt >= this.maxAttempts) throw error;
        await this.sleep(this.backoff(attempt) + jitter(this.random));
        continue;
      } finally {
        timeout.clear();
      }

      const requestId = res.headers.get('x-request-id');
      if (res.ok) {
        if (parsed.parseFailed) {
          throw new SigilError({ status: res.status, code: 'invalid_response', message: 'the response says JSON but does not parse', retryable: false, body: parsed.value, requestId, attempts: attempt });
        }
        return parsed.value as T;
      }
      const retryAfterMs = parseRetryAfter(res.headers.get('retry-after'), this.now());
      const error = errorFromResponse(res.status, parsed.value, { requestId, retryAfterMs, attempts: attempt });
      if (!RETRY_STATUSES.includes(res.status) || !error.retryable || attempt >= this.maxAttempts) throw error;
      const wait = retryAfterMs ?? this.backoff(attempt);
      if (wait > (this.options.maxRetryAfterMs ?? 120_000)) throw error;
      await this.sleep(wait + jitter(this.random));
    }
  }

  private backoff(attempt: number): number {
    return exponentialDelay(attempt, this.options.baseDelayMs ?? BASE_DELAY_MS, this.options.maxBackoffMs ?? MAX_BACKOFF_MS);
  }

  private url(path: string, query?: Record<string, QueryValue>): string {
    const qs = new URLSearchParams();
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== null) qs.append(k, String(v));
    const suffix = qs.toString();
    return `${this.baseUrl}${path.startsWith('/') ? path : `/${path}`}${suffix ? `?${suffix}` : ''}`;
  }

  /** A per-attempt signal that aborts on the caller's signal or on the timeout. */
  private attemptSignal(outer?: AbortSignal): { signal: AbortSignal; timedOut: () => boolean; clear: () => void } {
    const controller = new AbortController();
    const ms = this.options.timeoutMs ?? 30_000;
    let timedOut = false;
    const onAbort = () => controller.abort(outer?.reason);
    outer?.addEventListener('abort', onAbort, { once: true });
    const timer = ms > 0 ? setTimeout(() => ((timedOut = true), controller.abort(new Error('timeout'))), ms) : undefined;
    return {
      signal: controller.signal,
      timedOut: () => timedOut,
      clear: () => {
        if (timer !== undefined) clearTimeout(timer);
        outer?.removeEventListener('abort', onAbort);
      },
    };
  }
}
