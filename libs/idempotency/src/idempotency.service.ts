import { randomUUID } from 'node:crypto';
import { AppError, DomainError, ErrorBody } from '@app/core';
import { toErrorResponse } from '@app/http';
import type { Metrics } from '@app/metrics';
import {
  IDEMPOTENT_REPLAYED_HEADER,
  idempotencyKeyReused,
  idempotencyRequestInProgress,
  isStorableStatus,
  methodPath,
  parseIdempotencyKey,
  requestHash,
  requestIdOf,
} from './idempotency-key';
import { IdempotencyKeyRepository, KeyClaim, KeyRow } from './idempotency.repository';

export interface IdempotencyScope {
  orgId: string;
  /**
   * Who makes the request, spelled as the actor the request's events record (`api_key:<id>`,
   * `user:<id>`; a lane identity for a keyless caller). Keys are claimed per organization, but
   * only the caller who made the first request gets its response replayed: another caller of the
   * organization sending the same key is 422 `idempotency_key_reused`, never someone else's answer.
   */
  caller: string;
  key: string;
  method: string;
  /** The request path (a query string is ignored). */
  path: string;
  /** The parsed JSON body; compared by the SHA-256 of its RFC 8785 form. */
  body: unknown;
  /** The parsed query string, compared with the body when not empty. */
  query?: Record<string, unknown>;
  /** The route as the metrics name it (a route template, never a raw path); none: not counted. */
  route?: string;
}

/** Where replays and conflicts are counted (the app's Metrics). */
export type IdempotencyMetrics = Pick<Metrics, 'idempotencyReplayed' | 'idempotencyConflict'>;

export interface IdempotentResponse<T> {
  status: number;
  body: T;
  headers?: Record<string, string>;
}

/** What the work of a request with a key knows of it. */
export interface IdempotentRequest {
  /**
   * A name for this exact request (organization, key, method, path and body), the same each time
   * it is sent. Work that creates something names it from this: when a process dies after the
   * work committed but before the key recorded its answer, the claim's lease lapses and a retry
   * runs the work again, which then finds what the first run created instead of creating a second.
   */
  requestId: string;
}

export interface IdempotencyOptions {
  /** How long a claim holds without renewal; the claimant renews it every third of this. */
  leaseMs?: number;
  /** How long a key is kept (at least 24 h, as DESIGN.md promises). */
  retentionMs?: number;
  /** How long a duplicate waits for the first request to finish before 409 in progress. */
  waitMs?: number;
  /** Longest pause between two looks at a running request. */
  maxPollMs?: number;
}

const DAY_MS = 24 * 60 * 60 * 1000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * DESIGN.md's idempotency rule, held in the database so it holds across processes. A request
 * claims (organization, key) with one INSERT … ON CONFLICT; only the claimant runs the handler.
 * A duplicate from the same caller with the same method, path and body gets the stored response
 * (`replayed: true`); one from another caller, or with anything different, is 422
 * `idempotency_key_reused`. A duplicate arriving while the first still runs waits for it
 * (polling, up to `waitMs`) and then replays it, so N parallel identical requests all get the
 * one response; past `waitMs` it is 409 `idempotency_request_in_progress` with Retry-After. 5xx
 * responses and unexpected errors are not stored: the claim is released and a retry runs again.
 * A claim whose process died is taken over once its lease (renewed by a live claimant) runs out.
 */
export class IdempotencyService {
  private readonly leaseMs: number;
  private readonly retentionMs: number;
  private readonly waitMs: number;
  private readonly maxPollMs: number;

  constructor(
    private readonly keys: IdempotencyKeyRepository,
    options: IdempotencyOptions = {},
    private readonly metrics?: IdempotencyMetrics,
  ) {
    this.leaseMs = options.leaseMs ?? 60_000;
    this.retentionMs = options.retentionMs ?? DAY_MS;
    this.waitMs = options.waitMs ?? 5_000;
    this.maxPollMs = options.maxPollMs ?? 200;
  }

  /**
   * Runs `handler` once per (organization, key). A stored thrown error replays by being thrown
   * again (with `Idempotent-Replayed: true` among its headers); see `isStorableStatus` for
   * which thrown errors are stored.
   */
  async run<T>(scope: IdempotencyScope, handler: (request: IdempotentRequest) => Promise<IdempotentResponse<T>>): Promise<IdempotentResponse<T> & { replayed: boolean }> {
    const key = parseIdempotencyKey(scope.key);
    const request: KeyClaim = { org: scope.orgId, key, caller: scope.caller, hash: requestHash(scope.body, scope.query), methodPath: methodPath(scope.method, scope.path) };
    const deadline = Date.now() + this.waitMs;
    let pause = 5;
    for (;;) {
      const token = randomUUID();
      if (await this.keys.claim(request, token, this.leaseMs, this.retentionMs)) return this.execute(request, token, handler);
      // Someone holds the key: look until it is done, gone, or taken over.
      for (;;) {
        const row = await this.keys.read(request.org, key);
        if (!row || row.expired) break;
        const route = scope.route;
        // A row from before callers were recorded (kept at most 24 h) is compared as it was then.
        const otherCaller = row.caller !== null && row.caller !== request.caller;
        if (otherCaller || row.method_path !== request.methodPath || row.request_hash !== request.hash) {
          if (route) this.metrics?.idempotencyConflict(route, 'key_reused');
          throw idempotencyKeyReused(otherCaller ? 'a request by another caller of this organization' : row.method_path !== request.methodPath ? row.method_path : 'a request with a different body');
        }
        if (row.status === 'completed') {
          if (route) this.metrics?.idempotencyReplayed(route);
          return this.replay<T>(row);
        }
        if (row.lease_over) break;
        if (Date.now() >= deadline) {
          if (route) this.metrics?.idempotencyConflict(route, 'in_progress');
          throw idempotencyRequestInProgress(1);
        }
        pause = Math.min(pause * 2, this.maxPollMs, Math.max(1, deadline - Date.now()));
        await sleep(pause);
      }
    }
  }

  /** Deletes keys past their retention; returns how many. For a periodic sweep. */
  purgeExpired(): Promise<number> {
    return this.keys.purgeExpired();
  }

  private async execute<T>(
    r: KeyClaim,
    token: string,
    handler: (request: IdempotentRequest) => Promise<IdempotentResponse<T>>,
  ): Promise<IdempotentResponse<T> & { replayed: boolean }> {
    // A live claimant keeps its lease; only a dead one's claim lapses.
    const renewal = setInterval(() => {
      this.keys.renew(r, token, this.leaseMs).catch(() => undefined);
    }, Math.max(10, Math.floor(this.leaseMs / 3)));
    renewal.unref();
    let result: IdempotentResponse<T>;
    try {
      result = await handler({ requestId: requestIdOf(r) });
    } catch (err) {
      clearInterval(renewal);
      // A refusal (an AppError or a domain error, 4xx but a transient one) is this request's answer.
      const refusal = toErrorResponse(err);
      if ((err instanceof AppError || err instanceof DomainError) && isStorableStatus(refusal.status)) {
        const headers = Object.keys(refusal.headers).length > 0 ? refusal.headers : null;
        await this.keys.complete(r, token, this.retentionMs, { status: refusal.status, body: refusal.body, headers, isError: true });
      } else {
        await this.keys.release(r, token).catch(() => undefined); // a lapsed lease frees it anyway
      }
      throw err;
    }
    clearInterval(renewal);
    if (result.status >= 500) await this.keys.release(r, token).catch(() => undefined);
    else await this.keys.complete(r, token, this.retentionMs, { status: result.status, body: result.body, headers: result.headers ?? null, isError: false });
    return { ...result, replayed: false };
  }

  private replay<T>(row: KeyRow): IdempotentResponse<T> & { replayed: true } {
    const headers = { ...(row.response_headers ?? {}) };
    if (row.response_error) {
      const e = row.response_body as ErrorBody;
      throw new AppError(e.error, e.message, row.response_status!, e.details, { ...headers, [IDEMPOTENT_REPLAYED_HEADER]: 'true' });
    }
    return { status: row.response_status!, body: row.response_body as T, headers, replayed: true };
  }
}
