import { isoOrNull } from '@app/core';
import type { SqlDatabase } from '@app/event-store';
import type { DeliveryState } from '../domain/delivery.aggregate';
import type { DueDelivery } from '../queue/delivery-queue.port';

/** A row of the deliveries read model (the deliveries projection writes it). */
export interface DeliveryRow {
  id: string;
  org_id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  transaction_id: string | null;
  body: string;
  status: 'pending' | 'delivered' | 'failed';
  series: number;
  series_attempts: number;
  attempts: number;
  next_attempt_at: Date | string | null;
  last_attempt_at: Date | string | null;
  last_status_code: number | null;
  last_error: string | null;
  revision: string | number;
  event_recorded_at: Date | string;
  created_at: Date | string;
  updated_at: Date | string;
  delivered_at: Date | string | null;
}

export interface AttemptRow {
  attempt: number;
  series: number;
  attempted_at: Date | string;
  status_code: number | null;
  latency_ms: number;
  error: string | null;
  response_body: string | null;
  outcome: string;
  next_attempt_at: Date | string | null;
}

export interface DeliveryPageFilter {
  endpoint_id?: string;
  status?: 'pending' | 'delivered' | 'failed';
  event_type?: string;
  limit: number;
  /** After this (created_at, id), from the keyset cursor. */
  cursor?: { at: string; id: string };
}

/** The read model's row as the aggregate's state (numbers as numbers). */
export const deliveryFromRow = (r: DeliveryRow): DeliveryState => ({
  id: r.id,
  org_id: r.org_id,
  endpoint_id: r.endpoint_id,
  event_id: r.event_id,
  event_type: r.event_type,
  transaction_id: r.transaction_id,
  body: r.body,
  status: r.status,
  series: Number(r.series),
  series_attempts: Number(r.series_attempts),
  attempts: Number(r.attempts),
  next_attempt_at: isoOrNull(r.next_attempt_at),
  revision: Number(r.revision),
});

export const toDue = (r: Pick<DeliveryRow, 'id' | 'series' | 'next_attempt_at'>): DueDelivery => ({
  id: r.id,
  series: Number(r.series),
  at: r.next_attempt_at ? new Date(r.next_attempt_at) : new Date(),
});

/**
 * Reads of the deliveries read model, and the leases of the scheduler without Redis (its own
 * table: a lease counts while the delivery is at the revision it was claimed at, so recording
 * an attempt ends it without writing it).
 */
export abstract class DeliveryRows {
  abstract byId(id: string): Promise<DeliveryRow | null>;
  /** Several in one query (attempts load in batches); absent ones are missing from the map. */
  abstract byIds(ids: string[]): Promise<Map<string, DeliveryRow>>;
  /** One page (limit + 1 rows, newest first) of an organization's deliveries, filtered. */
  abstract page(orgId: string, f: DeliveryPageFilter): Promise<DeliveryRow[]>;
  abstract attempts(deliveryId: string): Promise<AttemptRow[]>;
  /** Failed deliveries of an endpoint created since `since`, oldest first. */
  abstract failedSince(endpointId: string, since: Date): Promise<string[]>;
  /** Every unfinished delivery, in pages: what a process re-enqueues when it starts. */
  abstract pending(pageSize?: number, dueBefore?: Date): AsyncGenerator<DueDelivery[]>;
  /** Claims due deliveries for this process: a lease each, so concurrent schedulers never attempt one twice at once. */
  abstract claimDue(limit: number, leaseMs: number, now: Date): Promise<DueDelivery[]>;
  /** When the next pending delivery falls due (ignoring leased ones), or null. */
  abstract nextDueAt(): Promise<Date | null>;
}

export class SqlDeliveryRows extends DeliveryRows {
  private claims = 0;

  constructor(private readonly db: SqlDatabase) {
    super();
  }

  async byId(id: string): Promise<DeliveryRow | null> {
    const [row] = await this.db.query<DeliveryRow>('SELECT * FROM webhook_deliveries WHERE id = $1', [id], { name: 'webhook_delivery_by_id' });
    return row ?? null;
  }

  async byIds(ids: string[]): Promise<Map<string, DeliveryRow>> {
    const rows = await this.db.query<DeliveryRow>('SELECT * FROM webhook_deliveries WHERE id = ANY($1::text[])', [ids], { name: 'webhook_deliveries_by_ids' });
    return new Map(rows.map((r) => [r.id, r]));
  }

  page(orgId: string, f: DeliveryPageFilter): Promise<DeliveryRow[]> {
    const params: unknown[] = [orgId];
    let where = 'org_id = $1';
    const add = (clause: string, value: unknown) => {
      params.push(value);
      where += ` AND ${clause.replace('?', `$${params.length}`)}`;
    };
    if (f.endpoint_id) add('endpoint_id = ?', f.endpoint_id);
    if (f.status) add('status = ?', f.status);
    if (f.event_type) add('event_type = ?', f.event_type);
    if (f.cursor) {
      params.push(f.cursor.at, f.cursor.id);
      where += ` AND (created_at, id) < ($${params.length - 1}::timestamptz, $${params.length})`;
    }
    params.push(f.limit + 1);
    return this.db.query<DeliveryRow>(`SELECT * FROM webhook_deliveries WHERE ${where} ORDER BY created_at DESC, id DESC LIMIT $${params.length}`, params);
  }

  attempts(deliveryId: string): Promise<AttemptRow[]> {
    return this.db.query<AttemptRow>('SELECT * FROM webhook_delivery_attempts WHERE delivery_id = $1 ORDER BY attempt', [deliveryId]);
  }

  async failedSince(endpointId: string, since: Date): Promise<string[]> {
    const rows = await this.db.query<{ id: string }>(
      `SELECT id FROM webhook_deliveries WHERE endpoint_id = $1 AND status = 'failed' AND created_at >= $2 ORDER BY created_at, id`,
      [endpointId, since.toISOString()],
    );
    return rows.map((r) => r.id);
  }

  async *pending(pageSize = 1000, dueBefore?: Date): AsyncGenerator<DueDelivery[]> {
    let after = '';
    for (;;) {
      const params: unknown[] = [after, pageSize];
      if (dueBefore) params.push(dueBefore.toISOString());
      const rows = await this.db.query<DeliveryRow>(
        `SELECT id, series, next_attempt_at FROM webhook_deliveries WHERE status = 'pending' AND id > $1
         ${dueBefore ? 'AND next_attempt_at < $3' : ''} ORDER BY id LIMIT $2`,
        params,
      );
      if (rows.length === 0) return;
      yield rows.map(toDue);
      after = rows[rows.length - 1].id;
      if (rows.length < pageSize) return;
    }
  }

  async claimDue(limit: number, leaseMs: number, now: Date): Promise<DueDelivery[]> {
    // Leases of finished attempts are only history: dropped now and then.
    if (++this.claims % 500 === 0) await this.db.query('DELETE FROM webhook_delivery_leases WHERE lease_until < $1', [now.toISOString()]);
    const rows = await this.db.query<DeliveryRow>(
      `WITH due AS (
         SELECT d.id, d.series, d.next_attempt_at, d.revision FROM webhook_deliveries d
         LEFT JOIN webhook_delivery_leases l ON l.delivery_id = d.id
         WHERE d.status = 'pending' AND d.next_attempt_at <= $1 AND (l.delivery_id IS NULL OR l.lease_until <= $1 OR l.revision <> d.revision)
         ORDER BY d.next_attempt_at LIMIT $2 FOR UPDATE OF d SKIP LOCKED
       ), claimed AS (
         INSERT INTO webhook_delivery_leases AS l (delivery_id, revision, lease_until) SELECT id, revision, $3 FROM due
         ON CONFLICT (delivery_id) DO UPDATE SET revision = EXCLUDED.revision, lease_until = EXCLUDED.lease_until
           WHERE l.lease_until <= $1 OR l.revision <> EXCLUDED.revision
         RETURNING delivery_id
       )
       SELECT due.id, due.series, due.next_attempt_at FROM due JOIN claimed ON claimed.delivery_id = due.id`,
      [now.toISOString(), limit, new Date(now.getTime() + leaseMs).toISOString()],
      { name: 'webhook_claim_due' },
    );
    return rows.map(toDue);
  }

  async nextDueAt(): Promise<Date | null> {
    const [row] = await this.db.query<{ at: Date | string | null }>(
      `SELECT min(CASE WHEN l.revision = d.revision AND l.lease_until > d.next_attempt_at THEN l.lease_until ELSE d.next_attempt_at END) AS at
       FROM webhook_deliveries d LEFT JOIN webhook_delivery_leases l ON l.delivery_id = d.id WHERE d.status = 'pending'`,
      [],
      { name: 'webhook_next_due' },
    );
    return row?.at ? new Date(row.at) : null;
  }
}

export const deliveryTimes = (r: DeliveryRow) => ({
  next_attempt_at: isoOrNull(r.next_attempt_at),
  last_attempt_at: isoOrNull(r.last_attempt_at),
  created_at: isoOrNull(r.created_at)!,
  updated_at: isoOrNull(r.updated_at)!,
  delivered_at: isoOrNull(r.delivered_at),
});
