import { randomUUID } from 'node:crypto';
import { AppError, ErrorBody, errorBody } from '@app/core';
import { SqlDatabase } from '@app/event-store';
import {
  IDEMPOTENT_REPLAYED_HEADER,
  idempotencyKeyReused,
  idempotencyRequestInProgress,
  isStorableError,
  methodPath,
  parseIdempotencyKey,
  requestHash,
} from './idempotency-key';

export interface IdempotencyScope {
  organizationId: string;
  key: string;
  method: string;
  /** The request path (a query string is ignored). */
  path: string;
  /** The parsed JSON body; compared by the SHA-256 of its RFC 8785 form. */
  body: unknown;
}

export interface IdempotentResponse<T> {
  status: number;
  body: T;
  headers?: Record<string, string>;
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

interface KeyRow {
  request_hash: string;
  method_path: string;
  status: 'in_progress' | 'completed';
  response_status: number | null;
  response_error: boolean;
  response_body: unknown;
  response_headers: Record<string, string> | null;
  expired: boolean;
  lease_over: boolean;
}

const DAY_MS = 24 * 60 * 60 * 1000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * DESIGN.md's idempotency rule, held in the database so it holds across processes. A request
 * claims (organization, key) with one INSERT … ON CONFLICT; only the claimant runs the handler.
 * A duplicate with the same method, path and body gets the stored response (`replayed: true`);
 * one with anything different is 422 `idempotency_key_reused`. A duplicate arriving while the
 * first still runs waits for it (polling, up to `waitMs`) and then replays it, so N parallel
 * identical requests all get the one response; past `waitMs` it is 409
 * `idempotency_request_in_progress` with Retry-After. 5xx responses and unexpected errors are
 * not stored: the claim is released and a retry runs again. A claim whose process died is taken
 * over once its lease (renewed by a live claimant) runs out.
 */
export class IdempotencyService {
  private readonly leaseMs: number;
  private readonly retentionMs: number;
  private readonly waitMs: number;
  private readonly maxPollMs: number;

  constructor(
    private readonly db: SqlDatabase,
    options: IdempotencyOptions = {},
  ) {
    this.leaseMs = options.leaseMs ?? 60_000;
    this.retentionMs = options.retentionMs ?? DAY_MS;
    this.waitMs = options.waitMs ?? 5_000;
    this.maxPollMs = options.maxPollMs ?? 200;
  }

  /**
   * Runs `handler` once per (organization, key). A stored thrown error replays by being thrown
   * again (with `Idempotent-Replayed: true` among its headers); see `isStorableError` for
   * which thrown errors are stored.
   */
  async run<T>(scope: IdempotencyScope, handler: () => Promise<IdempotentResponse<T>>): Promise<IdempotentResponse<T> & { replayed: boolean }> {
    const key = parseIdempotencyKey(scope.key);
    const request = { org: scope.organizationId, key, hash: requestHash(scope.body), methodPath: methodPath(scope.method, scope.path) };
    const deadline = Date.now() + this.waitMs;
    let pause = 5;
    for (;;) {
      const token = randomUUID();
      if (await this.claim(request, token)) return this.execute(request, token, handler);
      // Someone holds the key: look until it is done, gone, or taken over.
      for (;;) {
        const row = await this.read(request.org, key);
        if (!row || row.expired) break;
        if (row.method_path !== request.methodPath) throw idempotencyKeyReused(`${row.method_path}`);
        if (row.request_hash !== request.hash) throw idempotencyKeyReused('a request with a different body');
        if (row.status === 'completed') return this.replay<T>(row);
        if (row.lease_over) break;
        if (Date.now() >= deadline) throw idempotencyRequestInProgress(1);
        pause = Math.min(pause * 2, this.maxPollMs, Math.max(1, deadline - Date.now()));
        await sleep(pause);
      }
    }
  }

  /** Deletes keys past their retention; returns how many. For a periodic sweep. */
  async purgeExpired(): Promise<number> {
    const [row] = await this.db.query<{ n: number }>(
      `WITH gone AS (
         DELETE FROM idempotency_keys
         WHERE expires_at <= now() AND (status = 'completed' OR locked_until <= now())
         RETURNING 1)
       SELECT count(*)::int AS n FROM gone`,
    );
    return Number(row.n);
  }

  private async claim(r: { org: string; key: string; hash: string; methodPath: string }, token: string): Promise<boolean> {
    // Inserts the claim, or overwrites an expired row, or takes over a lapsed claim on the same
    // request. Racing claimants serialize on the row; the loser's WHERE sees the winner's row.
    const rows = await this.db.query<{ claim_token: string }>(
      `INSERT INTO idempotency_keys AS k
         (organization_id, key, request_hash, method_path, status, claim_token, locked_until, created_at, expires_at)
       VALUES ($1, $2, $3, $4, 'in_progress', $5, now() + $6::float8 * interval '1 millisecond', now(), now() + $7::float8 * interval '1 millisecond')
       ON CONFLICT (organization_id, key) DO UPDATE SET
         request_hash = EXCLUDED.request_hash, method_path = EXCLUDED.method_path, status = 'in_progress',
         claim_token = EXCLUDED.claim_token, locked_until = EXCLUDED.locked_until,
         created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at,
         response_status = NULL, response_error = false, response_body = NULL, response_headers = NULL
       WHERE k.expires_at <= now()
          OR (k.status = 'in_progress' AND k.locked_until <= now()
              AND k.request_hash = EXCLUDED.request_hash AND k.method_path = EXCLUDED.method_path)
       RETURNING claim_token`,
      [r.org, r.key, r.hash, r.methodPath, token, this.leaseMs, this.retentionMs],
      { name: 'idempotency_claim' },
    );
    return rows.length === 1 && rows[0].claim_token === token;
  }

  private async read(org: string, key: string): Promise<KeyRow | undefined> {
    const [row] = await this.db.query<KeyRow>(
      `SELECT request_hash, method_path, status, response_status, response_error, response_body, response_headers,
              expires_at <= now() AS expired, coalesce(locked_until <= now(), false) AS lease_over
       FROM idempotency_keys WHERE organization_id = $1 AND key = $2`,
      [org, key],
      { name: 'idempotency_read' },
    );
    return row;
  }

  private async execute<T>(
    r: { org: string; key: string },
    token: string,
    handler: () => Promise<IdempotentResponse<T>>,
  ): Promise<IdempotentResponse<T> & { replayed: boolean }> {
    // A live claimant keeps its lease; only a dead one's claim lapses.
    const renewal = setInterval(() => {
      this.db
        .query(
          `UPDATE idempotency_keys SET locked_until = now() + $4::float8 * interval '1 millisecond'
           WHERE organization_id = $1 AND key = $2 AND claim_token = $3 AND status = 'in_progress'`,
          [r.org, r.key, token, this.leaseMs],
        )
        .catch(() => undefined);
    }, Math.max(10, Math.floor(this.leaseMs / 3)));
    renewal.unref();
    let result: IdempotentResponse<T>;
    try {
      result = await handler();
    } catch (err) {
      clearInterval(renewal);
      if (isStorableError(err)) {
        await this.complete(r, token, err.status, errorBody(err.code, err.message, err.details), err.headers ?? null, true);
      } else {
        await this.release(r, token).catch(() => undefined); // a lapsed lease frees it anyway
      }
      throw err;
    }
    clearInterval(renewal);
    if (result.status >= 500) await this.release(r, token).catch(() => undefined);
    else await this.complete(r, token, result.status, result.body, result.headers ?? null, false);
    return { ...result, replayed: false };
  }

  private async complete(
    r: { org: string; key: string },
    token: string,
    status: number,
    body: unknown,
    headers: Record<string, string> | null,
    isError: boolean,
  ): Promise<void> {
    await this.db.query(
      `UPDATE idempotency_keys
       SET status = 'completed', locked_until = NULL, response_status = $4, response_error = $5,
           response_body = $6::json, response_headers = $7::json
       WHERE organization_id = $1 AND key = $2 AND claim_token = $3 AND status = 'in_progress'`,
      [r.org, r.key, token, status, isError, JSON.stringify(body ?? null), headers ? JSON.stringify(headers) : null],
      { name: 'idempotency_complete' },
    );
  }

  private async release(r: { org: string; key: string }, token: string): Promise<void> {
    await this.db.query(`DELETE FROM idempotency_keys WHERE organization_id = $1 AND key = $2 AND claim_token = $3 AND status = 'in_progress'`, [
      r.org,
      r.key,
      token,
    ]);
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
