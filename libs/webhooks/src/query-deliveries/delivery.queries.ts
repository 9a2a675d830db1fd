import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { DomainError, isoOrNull } from '@app/core';
import { decodePageCursor, encodePageCursor } from '@app/http';
import { DeliveryRow, DeliveryRows, deliveryTimes } from '../delivery/delivery-rows.repository';

export interface DeliveryListFilter {
  endpoint_id?: string;
  status?: 'pending' | 'delivered' | 'failed';
  event_type?: string;
  limit: number;
  cursor?: string;
}

/** Delivery history, newest first, in cursor pages. */
export class ListDeliveriesQuery {
  constructor(
    readonly organizationId: string,
    readonly filter: DeliveryListFilter,
  ) {}
}

/** One delivery with its payload and attempt history; another organization's answers like a missing one. */
export class GetDeliveryQuery {
  constructor(
    readonly organizationId: string,
    readonly deliveryId: string,
  ) {}
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

@QueryHandler(ListDeliveriesQuery)
export class ListDeliveriesHandler implements IQueryHandler<ListDeliveriesQuery> {
  constructor(private readonly rows: DeliveryRows) {}

  async execute({ organizationId, filter: q }: ListDeliveriesQuery) {
    const rows = await this.rows.page(organizationId, { ...q, cursor: q.cursor ? decodePageCursor(q.cursor) : undefined });
    const page = rows.slice(0, q.limit);
    const last = page[page.length - 1];
    return { items: page.map(deliveryView), next_cursor: rows.length > q.limit ? encodePageCursor(last.created_at, last.id) : null };
  }
}

@QueryHandler(GetDeliveryQuery)
export class GetDeliveryHandler implements IQueryHandler<GetDeliveryQuery> {
  constructor(private readonly rows: DeliveryRows) {}

  async execute({ organizationId, deliveryId }: GetDeliveryQuery) {
    const row = await this.rows.byId(deliveryId);
    if (!row || row.org_id !== organizationId) throw new DomainError('not_found', `webhook delivery ${deliveryId} not found`);
    const attempts = await this.rows.attempts(deliveryId);
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
}
