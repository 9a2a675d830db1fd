import { isoOrNull } from '@app/core';
import { NewEvent, SqlDatabase, SqlEventStore, SqlExecutor } from '@app/event-store';
import { deliveryStream, WebhookEvents } from '../domain/event-types';
import { uuidFromName } from '../domain/ids';
import { applyDeliveryEvent, DeliveryScheduled } from './delivery.events';

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
  lease_until: Date | string | null;
  last_attempt_at: Date | string | null;
  last_status_code: number | null;
  last_error: string | null;
  revision: string | number;
  event_recorded_at: Date | string;
  created_at: Date | string;
  updated_at: Date | string;
  delivered_at: Date | string | null;
}

/** What a queue needs to run a delivery: its id, its attempt series, and when it is due. */
export interface DueDelivery {
  id: string;
  series: number;
  at: Date;
}

export const toDue = (r: Pick<DeliveryRow, 'id' | 'series' | 'next_attempt_at'>): DueDelivery => ({
  id: r.id,
  series: Number(r.series),
  at: r.next_attempt_at ? new Date(r.next_attempt_at) : new Date(),
});

/** Appends delivery events and applies them to the read model in one transaction. */
export async function recordDeliveryEvents(store: SqlEventStore, tx: SqlExecutor, deliveryId: string, expected: number | 'any', events: NewEvent[]) {
  const result = await store.appendIn(tx, deliveryStream(deliveryId), events, expected);
  // An idempotent replay (a fan-out run again) has already been applied.
  if (!result.idempotentReplay) for (const e of result.events) await applyDeliveryEvent(e, tx);
  return result;
}

/** Reads and schedules deliveries; attempts are written by the DeliveryProcessor. */
export class DeliveryRepository {
  constructor(
    private readonly db: SqlDatabase,
    private readonly store: SqlEventStore,
  ) {}

  /** The scheduled event's id is derived from the delivery id, so scheduling twice stores it once. */
  async scheduleIn(tx: SqlExecutor, d: DeliveryScheduled): Promise<void> {
    await recordDeliveryEvents(this.store, tx, d.delivery_id, 'any', [
      { event_id: uuidFromName('webhook.delivery_scheduled', d.delivery_id), type: WebhookEvents.deliveryScheduled, data: d },
    ]);
  }

  async get(id: string, executor: SqlExecutor = this.db): Promise<DeliveryRow | null> {
    const [row] = await executor.query<DeliveryRow>('SELECT * FROM webhook_deliveries WHERE id = $1', [id], { name: 'webhook_delivery_by_id' });
    return row ?? null;
  }

  async lock(tx: SqlExecutor, id: string): Promise<DeliveryRow | null> {
    const [row] = await tx.query<DeliveryRow>('SELECT * FROM webhook_deliveries WHERE id = $1 FOR UPDATE', [id], { name: 'webhook_delivery_lock' });
    return row ?? null;
  }

  /** Pending deliveries of the given source events (what a fan-out batch just scheduled). */
  async pendingForEvents(eventIds: string[]): Promise<DueDelivery[]> {
    if (eventIds.length === 0) return [];
    const rows = await this.db.query<DeliveryRow>(
      `SELECT id, series, next_attempt_at FROM webhook_deliveries WHERE event_id = ANY($1::uuid[]) AND status = 'pending'`,
      [eventIds],
    );
    return rows.map(toDue);
  }

  /** Every unfinished delivery, in pages: what a process re-enqueues when it starts. */
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

  /**
   * Claims due deliveries for this process (the scheduler without Redis): each gets a lease, so
   * concurrent schedulers on one PostgreSQL never attempt one delivery twice at once. Recording
   * the attempt clears the lease; a crashed process's lease just runs out.
   */
  async claimDue(limit: number, leaseMs: number, now: Date): Promise<DueDelivery[]> {
    const rows = await this.db.query<DeliveryRow>(
      `UPDATE webhook_deliveries SET lease_until = $3 WHERE id IN (
         SELECT id FROM webhook_deliveries
         WHERE status = 'pending' AND next_attempt_at <= $1 AND (lease_until IS NULL OR lease_until <= $1)
         ORDER BY next_attempt_at LIMIT $2 FOR UPDATE SKIP LOCKED)
       RETURNING id, series, next_attempt_at`,
      [now.toISOString(), limit, new Date(now.getTime() + leaseMs).toISOString()],
      { name: 'webhook_claim_due' },
    );
    return rows.map(toDue);
  }

  /** When the next pending delivery falls due (ignoring leased ones), or null. */
  async nextDueAt(): Promise<Date | null> {
    const [row] = await this.db.query<{ at: Date | string | null }>(
      `SELECT min(greatest(next_attempt_at, coalesce(lease_until, next_attempt_at))) AS at FROM webhook_deliveries WHERE status = 'pending'`,
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
