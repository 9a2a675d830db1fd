import type { Logger } from '@app/http';
import { SqlDatabase, SqlEventStore } from '@app/event-store';
import { deliveryStream, WebhookEvents } from '../domain/event-types';
import type { SendResult } from '../sending/http-sender';
import { Batcher } from '@app/core';
import type { DeliveryAttempted } from './delivery.events';
import type { DeliveryRow } from './delivery.repository';

export interface DeliveredAttempt {
  /** The delivery as loaded before the attempt: its revision is the expected one. */
  delivery: DeliveryRow;
  series: number;
  result: SendResult;
}

/** Writes of the read model for the attempts `appended` holds (parameters: see `record`). */
const FOLLOW_UPS = [
  `INSERT INTO webhook_delivery_attempts (delivery_id, attempt, series, attempted_at, status_code, latency_ms, error, response_body, outcome, next_attempt_at)
   SELECT r.delivery_id, r.attempt, r.series, a.recorded_at, r.status_code, r.latency_ms, NULL, r.response_body, 'delivered', NULL
   FROM appended a JOIN unnest(:1::text[], :2::int[], :3::int[], :4::int[], :5::int[], :6::text[])
        WITH ORDINALITY AS r(delivery_id, attempt, series, status_code, latency_ms, response_body, ord) USING (ord)
   WHERE a.status = 'appended'
   ON CONFLICT DO NOTHING`,
  `UPDATE webhook_deliveries w SET
     attempts = r.attempt, last_attempt_at = a.recorded_at, last_status_code = r.status_code, last_error = NULL, revision = a.stream_revision,
     updated_at = a.recorded_at, lease_until = NULL, status = 'delivered', series_attempts = w.series_attempts + 1, next_attempt_at = NULL,
     delivered_at = a.recorded_at
   FROM appended a JOIN unnest(:1::text[], :2::int[], :4::int[]) WITH ORDINALITY AS r(delivery_id, attempt, status_code, ord) USING (ord)
   WHERE a.status = 'appended' AND w.id = r.delivery_id`,
  // A success ends the endpoint's failure streak.
  `UPDATE webhook_endpoints SET failing_since = NULL
   WHERE failing_since IS NOT NULL AND id IN (
     SELECT r.endpoint_id FROM appended a JOIN unnest(:7::text[]) WITH ORDINALITY AS r(endpoint_id, ord) USING (ord) WHERE a.status = 'appended')`,
];

/**
 * Records successful attempts in batches (see Batcher): one statement appends each attempt's
 * DeliveryAttempted event to its delivery's stream, with the revision the delivery had when it
 * was loaded as the expected one, and updates the read model of those appended, atomically.
 * Most attempts succeed, so this is the path that must be cheap.
 *
 * An unchanged revision proves the delivery is still the pending one of that series (every change
 * to it is an event), so the attempt is `current`. When it changed meanwhile (a duplicate
 * attempt won, or the batch failed), `record` answers false and the caller records the attempt
 * the careful way, under the delivery's row lock.
 */
export class DeliveredRecorder {
  private readonly batcher: Batcher<DeliveredAttempt, boolean>;

  constructor(
    private readonly db: SqlDatabase,
    private readonly store: SqlEventStore,
    options: { maxBatch?: number; maxInFlight?: number } = {},
    private readonly logger?: Logger,
  ) {
    this.batcher = new Batcher((items) => this.write(items), { maxBatch: options.maxBatch ?? 200, maxInFlight: options.maxInFlight ?? 2 });
  }

  /** True once recorded; false when the caller must record it under the lock instead. */
  record(attempt: DeliveredAttempt): Promise<boolean> {
    return this.batcher.add(attempt).catch((err) => {
      this.logger?.warn({ err: (err as Error).message, delivery_id: attempt.delivery.id }, 'webhook attempt batch failed; recording it alone');
      return false;
    });
  }

  private async write(items: DeliveredAttempt[]): Promise<boolean[]> {
    // Stream locks in one order across concurrent batches.
    const order = items.map((_, i) => i).sort((a, b) => (items[a].delivery.id < items[b].delivery.id ? -1 : items[a].delivery.id > items[b].delivery.id ? 1 : 0));
    const sorted = order.map((i) => items[i]);
    const data = sorted.map(({ delivery: d, series, result }): DeliveryAttempted => ({
      delivery_id: d.id,
      endpoint_id: d.endpoint_id,
      organization_id: d.org_id,
      webhook_id: d.event_id,
      attempt: Number(d.attempts) + 1,
      series,
      status_code: result.statusCode,
      latency_ms: result.latencyMs,
      error: null,
      response_body: result.responseBody,
      outcome: 'delivered',
      next_attempt_at: null,
      current: true,
    }));
    const outcomes = await this.store.appendManyIn(
      this.db,
      sorted.map(({ delivery: d }, i) => ({ stream: deliveryStream(d.id), events: [{ type: WebhookEvents.deliveryAttempted, data: data[i] }], expected: Number(d.revision) })),
      {
        sql: FOLLOW_UPS,
        params: [
          data.map((a) => a.delivery_id),
          data.map((a) => a.attempt),
          data.map((a) => a.series),
          data.map((a) => a.status_code),
          data.map((a) => a.latency_ms),
          data.map((a) => a.response_body),
          data.map((a) => a.endpoint_id),
        ],
        name: 'webhook_delivered_many',
      },
    );
    const recorded = new Array<boolean>(items.length);
    order.forEach((original, i) => (recorded[original] = outcomes[i].status === 'appended'));
    return recorded;
  }
}
