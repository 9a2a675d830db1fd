import { randomUUID } from 'node:crypto';
import { AppError, isoOrNull } from '@app/core';
import { decodePageCursor, encodePageCursor } from '@app/http';
import { SqlDatabase, SqlEventStore } from '@app/event-store';
import { WebhookEvents } from '../domain/event-types';
import { deliveryIdFor } from '../domain/ids';
import { testPingBody } from '../domain/payload';
import { EndpointService } from '../endpoints/endpoint.service';
import { DeliveryQueue } from '../queue/delivery-queue.port';
import { RedeliveryRequested } from './delivery.events';
import { DeliveryRepository, DeliveryRow, deliveryTimes, recordDeliveryEvents, toDue } from './delivery.repository';

export interface DeliveryQuery {
  endpoint_id?: string;
  status?: 'pending' | 'delivered' | 'failed';
  event_type?: string;
  limit: number;
  cursor?: string;
}

interface AttemptRow {
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

const deliveryView = (r: DeliveryRow) => ({
  id: r.id,
  endpoint_id: r.endpoint_id,
  webhook_id: r.event_id,
  event_type: r.event_type,
  transaction_id: r.transaction_id,
  status: r.status,
  attempts: Number(r.attempts),
  series: Number(r.series),
  last_status_code: r.last_status_code,
  last_error: r.last_error,
  ...deliveryTimes(r),
});

/** Delivery history, redelivery and recovery, and the endpoint test ping. */
export class DeliveryService {
  constructor(
    private readonly db: SqlDatabase,
    private readonly store: SqlEventStore,
    private readonly deliveries: DeliveryRepository,
    private readonly endpoints: EndpointService,
    private readonly queue: DeliveryQueue,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async list(orgId: string, q: DeliveryQuery) {
    const params: unknown[] = [orgId];
    let where = 'org_id = $1';
    const add = (clause: string, value: unknown) => {
      params.push(value);
      where += ` AND ${clause.replace('?', `$${params.length}`)}`;
    };
    if (q.endpoint_id) add('endpoint_id = ?', q.endpoint_id);
    if (q.status) add('status = ?', q.status);
    if (q.event_type) add('event_type = ?', q.event_type);
    if (q.cursor) {
      const { at, id } = decodePageCursor(q.cursor);
      params.push(at, id);
      where += ` AND (created_at, id) < ($${params.length - 1}::timestamptz, $${params.length})`;
    }
    params.push(q.limit + 1);
    const rows = await this.db.query<DeliveryRow>(
      `SELECT * FROM webhook_deliveries WHERE ${where} ORDER BY created_at DESC, id DESC LIMIT $${params.length}`,
      params,
    );
    const page = rows.slice(0, q.limit);
    return { items: page.map(deliveryView), next_cursor: rows.length > q.limit ? encodePageCursor(page[page.length - 1].created_at, page[page.length - 1].id) : null };
  }

  async get(orgId: string, id: string) {
    const row = await this.deliveries.get(id);
    if (!row || row.org_id !== orgId) throw new AppError('not_found', `webhook delivery ${id} not found`, 404);
    const attempts = await this.db.query<AttemptRow>('SELECT * FROM webhook_delivery_attempts WHERE delivery_id = $1 ORDER BY attempt', [id]);
    return {
      ...deliveryView(row),
      payload: JSON.parse(row.body) as unknown,
      attempt_history: attempts.map((a) => ({
        attempt: a.attempt,
        series: a.series,
        attempted_at: isoOrNull(a.attempted_at),
        status_code: a.status_code,
        latency_ms: a.latency_ms,
        error: a.error,
        response_body: a.response_body,
        outcome: a.outcome,
        next_attempt_at: isoOrNull(a.next_attempt_at),
      })),
    };
  }

  /** A new series of attempts for a finished delivery, with the same webhook-id and body. */
  async redeliver(orgId: string, id: string, actor: string) {
    const result = await this.startSeries(orgId, id, actor, { onlyFailed: false });
    await this.queue.enqueue([result.due]);
    return { id, webhook_id: result.webhook_id, status: 'pending' as const, series: result.due.series };
  }

  /** Re-sends every failed delivery of an endpoint created since `since`. */
  async recover(orgId: string, endpointId: string, since: Date, actor: string) {
    const endpoint = await this.endpoints.get(orgId, endpointId);
    if (!endpoint.enabled) throw endpointDisabled(endpointId);
    const ids = await this.db.query<{ id: string }>(
      `SELECT id FROM webhook_deliveries WHERE endpoint_id = $1 AND status = 'failed' AND created_at >= $2 ORDER BY created_at, id`,
      [endpointId, since.toISOString()],
    );
    let recovered = 0;
    for (let i = 0; i < ids.length; i += 200) {
      const due = [];
      for (const { id } of ids.slice(i, i + 200)) {
        const r = await this.startSeries(orgId, id, actor, { onlyFailed: true }).catch((err) => {
          if (err instanceof AppError && err.code === 'webhook_delivery_pending') return null; // raced with another redelivery
          throw err;
        });
        if (r) due.push(r.due);
      }
      await this.queue.enqueue(due);
      recovered += due.length;
    }
    return { endpoint_id: endpointId, since: since.toISOString(), recovered };
  }

  /** Sends a `webhook.test` ping through the normal delivery path. */
  async sendTest(orgId: string, endpointId: string, actor: string) {
    const endpoint = await this.endpoints.get(orgId, endpointId);
    if (!endpoint.enabled) throw endpointDisabled(endpointId);
    const webhookId = randomUUID();
    const at = this.now();
    const deliveryId = deliveryIdFor(webhookId, endpointId);
    const body = testPingBody(webhookId, endpointId, at, actor);
    await this.db.transaction((tx) =>
      this.deliveries.scheduleIn(tx, {
        delivery_id: deliveryId,
        endpoint_id: endpointId,
        organization_id: orgId,
        webhook_id: webhookId,
        event_type: body.event_type,
        transaction_id: null,
        event_recorded_at: at.toISOString(),
        body,
      }),
    );
    const row = (await this.deliveries.get(deliveryId))!;
    await this.queue.enqueue([toDue(row)]);
    return { delivery_id: deliveryId, webhook_id: webhookId, status: 'pending' as const };
  }

  private async startSeries(orgId: string, id: string, actor: string, opts: { onlyFailed: boolean }) {
    return this.db.transaction(async (tx) => {
      const row = await this.deliveries.lock(tx, id);
      if (!row || row.org_id !== orgId) throw new AppError('not_found', `webhook delivery ${id} not found`, 404);
      if (row.status === 'pending' || (opts.onlyFailed && row.status !== 'failed')) {
        throw new AppError('webhook_delivery_pending', `Delivery ${id} is still being attempted; redeliver it once it has finished`, 409);
      }
      const [ep] = await tx.query<{ enabled: boolean; deleted_at: unknown }>('SELECT enabled, deleted_at FROM webhook_endpoints WHERE id = $1', [row.endpoint_id]);
      if (!ep || ep.deleted_at || !ep.enabled) throw endpointDisabled(row.endpoint_id);
      const data: RedeliveryRequested = {
        delivery_id: id,
        endpoint_id: row.endpoint_id,
        organization_id: orgId,
        series: Number(row.series) + 1,
        requested_by: actor,
      };
      const result = await recordDeliveryEvents(this.store, tx, id, Number(row.revision), [{ type: WebhookEvents.redeliveryRequested, data }]);
      return { webhook_id: row.event_id, due: { id, series: data.series, at: new Date(result.events[0].recorded_at) } };
    });
  }
}

const endpointDisabled = (id: string) =>
  new AppError('webhook_endpoint_disabled', `Webhook endpoint ${id} is disabled or deleted; enable it first`, 409);
