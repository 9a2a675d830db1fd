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

const SCHEDULE_CHUNK = 1000;

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

  /**
   * Schedules many deliveries in one statement per thousand (the fan-out's batch): each its own
   * stream's DeliveryScheduled event plus its read-model row, written only when appended (a
   * replayed fan-out finds the events stored and writes nothing).
   */
  async scheduleManyIn(tx: SqlExecutor, items: DeliveryScheduled[]): Promise<void> {
    for (let i = 0; i < items.length; i += SCHEDULE_CHUNK) {
      const chunk = items.slice(i, i + SCHEDULE_CHUNK);
      await this.store.appendManyIn(
        tx,
        chunk.map((d) => ({
          stream: deliveryStream(d.delivery_id),
          events: [{ event_id: uuidFromName('webhook.delivery_scheduled', d.delivery_id), type: WebhookEvents.deliveryScheduled, data: d }],
          expected: 'any' as const,
        })),
        {
          sql: `INSERT INTO webhook_deliveries (id, org_id, endpoint_id, event_id, event_type, transaction_id, body, status, series, series_attempts, attempts,
                                                next_attempt_at, revision, event_recorded_at, created_at, updated_at)
                SELECT d.id, d.org_id, d.endpoint_id, d.event_id, d.event_type, d.transaction_id, d.body, 'pending', 1, 0, 0,
                       a.recorded_at, a.stream_revision, d.event_recorded_at, a.recorded_at, a.recorded_at
                FROM appended a
                JOIN unnest(:1::text[], :2::text[], :3::text[], :4::uuid[], :5::text[], :6::text[], :7::text[], :8::timestamptz[])
                     WITH ORDINALITY AS d(id, org_id, endpoint_id, event_id, event_type, transaction_id, body, event_recorded_at, ord) USING (ord)
                WHERE a.status = 'appended'
                ON CONFLICT (id) DO NOTHING`,
          params: [
            chunk.map((d) => d.delivery_id),
            chunk.map((d) => d.organization_id),
            chunk.map((d) => d.endpoint_id),
            chunk.map((d) => d.webhook_id),
            chunk.map((d) => d.event_type),
            chunk.map((d) => d.transaction_id),
            chunk.map((d) => JSON.stringify(d.body)),
            chunk.map((d) => d.event_recorded_at),
          ],
          name: 'webhook_schedule_many',
        },
      );
    }
  }

  async get(id: string, executor: SqlExecutor = this.db): Promise<DeliveryRow | null> {
    const [row] = await executor.query<DeliveryRow>('SELECT * FROM webhook_deliveries WHERE id = $1', [id], { name: 'webhook_delivery_by_id' });
    return row ?? null;
  }

  /** Several deliveries in one query (the processor batches its loads); absent ones are missing from the map. */
  async getMany(ids: string[]): Promise<Map<string, DeliveryRow>> {
    const rows = await this.db.query<DeliveryRow>('SELECT * FROM webhook_deliveries WHERE id = ANY($1::text[])', [ids], { name: 'webhook_deliveries_by_ids' });
    return new Map(rows.map((r) => [r.id, r]));
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
