import { Batcher } from '@app/core';
import type { SqlDatabase } from '@app/event-store';

/** One key's row, as a duplicate reads it. */
export interface KeyRow {
  request_hash: string;
  method_path: string;
  /** Who made the first request; null on a row from before callers were recorded. */
  caller: string | null;
  status: 'in_progress' | 'completed';
  response_status: number | null;
  response_error: boolean;
  response_body: unknown;
  response_headers: Record<string, string> | null;
  expired: boolean;
  lease_over: boolean;
}

export interface KeyClaim {
  org: string;
  key: string;
  /** Who makes the request (see IdempotencyScope.caller). */
  caller: string;
  hash: string;
  methodPath: string;
}

type Completion = KeyClaim & { token: string; retentionMs: number; status: number; body: unknown; headers: Record<string, string> | null; isError: boolean };

/** The idempotency_keys table: claims, leases, stored responses. Only IdempotencyService uses it. */
export class IdempotencyKeyRepository {
  private readonly claims = new Batcher((batch: Parameters<IdempotencyKeyRepository['claimMany']>[0]) => this.claimMany(batch), { maxBatch: 200, maxInFlight: 4 });
  private readonly completions = new Batcher((batch: Parameters<IdempotencyKeyRepository['completeMany']>[0]) => this.completeMany(batch), { maxBatch: 200, maxInFlight: 4 });

  constructor(private readonly db: SqlDatabase) {}

  /**
   * Inserts the claim, or overwrites an expired row, or takes over a lapsed claim on the same
   * request by the same caller (or one from before callers were recorded). Racing claimants serialize on the row; the loser's WHERE sees the winner's row.
   * Claims made at the same moment go in one statement (group commit); a key twice in one batch
   * is claimed by its first request only, the other waits for it like any duplicate.
   */
  async claim(r: KeyClaim, token: string, leaseMs: number, retentionMs: number): Promise<boolean> {
    return this.claims.add({ ...r, token, leaseMs, retentionMs });
  }

  private async claimMany(batch: (KeyClaim & { token: string; leaseMs: number; retentionMs: number })[]): Promise<boolean[]> {
    const seen = new Set<string>();
    const rows = batch.filter((c) => {
      const id = `${c.org}\u0000${c.key}`;
      return seen.has(id) ? false : (seen.add(id), true);
    });
    const won = await this.db.query<{ claim_token: string }>(
      `INSERT INTO idempotency_keys AS k
         (organization_id, key, caller, request_hash, method_path, status, claim_token, locked_until, created_at, expires_at)
       SELECT x.org, x.key, x.caller, x.hash, x.method_path, 'in_progress', x.token, now() + x.lease_ms * interval '1 millisecond', now(),
              now() + x.retention_ms * interval '1 millisecond'
       FROM json_to_recordset($1::json) AS x(org text, key text, caller text, hash text, method_path text, token uuid, lease_ms float8, retention_ms float8)
       ORDER BY x.org, x.key
       ON CONFLICT (organization_id, key) DO UPDATE SET
         caller = EXCLUDED.caller, request_hash = EXCLUDED.request_hash, method_path = EXCLUDED.method_path, status = 'in_progress',
         claim_token = EXCLUDED.claim_token, locked_until = EXCLUDED.locked_until,
         created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at,
         response_status = NULL, response_error = false, response_body = NULL, response_headers = NULL
       WHERE k.expires_at <= now()
          OR (k.status = 'in_progress' AND k.locked_until <= now()
              AND k.request_hash = EXCLUDED.request_hash AND k.method_path = EXCLUDED.method_path
              AND (k.caller IS NULL OR k.caller = EXCLUDED.caller))
       RETURNING claim_token`,
      [JSON.stringify(rows.map((c) => ({ org: c.org, key: c.key, caller: c.caller, hash: c.hash, method_path: c.methodPath, token: c.token, lease_ms: c.leaseMs, retention_ms: c.retentionMs })))],
      { name: 'idempotency_claim_many_v2' },
    );
    const tokens = new Set(won.map((w) => w.claim_token));
    return batch.map((c) => tokens.has(c.token));
  }

  async read(org: string, key: string): Promise<KeyRow | undefined> {
    const [row] = await this.db.query<KeyRow>(
      `SELECT request_hash, method_path, caller, status, response_status, response_error, response_body, response_headers,
              expires_at <= now() AS expired, coalesce(locked_until <= now(), false) AS lease_over
       FROM idempotency_keys WHERE organization_id = $1 AND key = $2`,
      [org, key],
      { name: 'idempotency_read_v2' },
    );
    return row;
  }

  async renew(r: { org: string; key: string }, token: string, leaseMs: number): Promise<void> {
    await this.db.query(
      `UPDATE idempotency_keys SET locked_until = now() + $4::float8 * interval '1 millisecond'
       WHERE organization_id = $1 AND key = $2 AND claim_token = $3 AND status = 'in_progress'`,
      [r.org, r.key, token, leaseMs],
    );
  }

  /**
   * Stores the response of the claim `token` holds; completions of one moment share one statement.
   * Written as an upsert on the primary key, not an UPDATE … FROM the batch: the upsert finds each
   * row through its unique index whatever the plan, where a join's generic plan, cached while the
   * table was small, scanned the whole table for every batch until the next ANALYZE. A claim that
   * is gone (never the case while its lease is renewed) gets its completed row back; one another
   * request has taken over is left alone.
   */
  async complete(
    r: KeyClaim,
    token: string,
    retentionMs: number,
    response: { status: number; body: unknown; headers: Record<string, string> | null; isError: boolean },
  ): Promise<void> {
    await this.completions.add({ ...r, token, retentionMs, ...response });
  }

  private async completeMany(batch: Completion[]): Promise<void[]> {
    // An upsert may touch a row once per statement: a key twice in one batch (the claimant whose
    // lease lapsed, and the request that took the key over) goes in the next round.
    for (let rest = batch; rest.length > 0; ) {
      const seen = new Set<string>();
      const round: Completion[] = [];
      const later: Completion[] = [];
      for (const c of rest) {
        const id = `${c.org}\u0000${c.key}`;
        if (seen.has(id)) {
          later.push(c);
        } else {
          seen.add(id);
          round.push(c);
        }
      }
      await this.completeRound(round);
      rest = later;
    }
    return batch.map(() => undefined);
  }

  private async completeRound(round: Completion[]): Promise<void> {
    await this.db.query(
      `INSERT INTO idempotency_keys AS k
         (organization_id, key, caller, request_hash, method_path, status, claim_token, locked_until,
          response_status, response_error, response_body, response_headers, created_at, expires_at)
       SELECT x.org, x.key, x.caller, x.hash, x.method_path, 'completed', x.token, NULL, x.status, x.is_error, x.body, x.headers,
              now(), now() + x.retention_ms * interval '1 millisecond'
       FROM json_to_recordset($1::json) AS x(org text, key text, caller text, hash text, method_path text, token uuid, retention_ms float8,
                                             status integer, is_error boolean, body json, headers json)
       ORDER BY x.org, x.key
       ON CONFLICT (organization_id, key) DO UPDATE SET
         status = 'completed', locked_until = NULL, response_status = EXCLUDED.response_status,
         response_error = EXCLUDED.response_error, response_body = EXCLUDED.response_body, response_headers = EXCLUDED.response_headers
       WHERE k.claim_token = EXCLUDED.claim_token AND k.status = 'in_progress'`,
      [
        JSON.stringify(
          round.map((c) => ({
            org: c.org,
            key: c.key,
            caller: c.caller,
            hash: c.hash,
            method_path: c.methodPath,
            token: c.token,
            retention_ms: c.retentionMs,
            status: c.status,
            is_error: c.isError,
            body: c.body ?? null,
            headers: c.headers,
          })),
        ),
      ],
      { name: 'idempotency_complete_many_v3' },
    );
  }

  async release(r: { org: string; key: string }, token: string): Promise<void> {
    await this.db.query(`DELETE FROM idempotency_keys WHERE organization_id = $1 AND key = $2 AND claim_token = $3 AND status = 'in_progress'`, [
      r.org,
      r.key,
      token,
    ]);
  }

  /** Deletes keys past their retention; returns how many. */
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
}
