import type { SqlDatabase } from '@app/event-store';
import type { WebhookBacklog } from '@app/metrics';

/** The delivery backlog for the metrics, read when scraped (one statement; the pending deliveries have their own index). */
export class DeliveryBacklog {
  constructor(private readonly db: SqlDatabase) {}

  async read(): Promise<WebhookBacklog> {
    const [row] = await this.db.query<{ due: string | number; scheduled: string | number; oldest: string | number | null; disabled: string | number }>(
      `SELECT count(*) FILTER (WHERE next_attempt_at IS NULL OR next_attempt_at <= now()) AS due,
              count(*) FILTER (WHERE next_attempt_at > now()) AS scheduled,
              EXTRACT(EPOCH FROM now() - min(event_recorded_at)) AS oldest,
              (SELECT count(*) FROM webhook_endpoints WHERE NOT enabled AND deleted_at IS NULL) AS disabled
         FROM webhook_deliveries WHERE status = 'pending'`,
    );
    return { due: Number(row.due), scheduled: Number(row.scheduled), oldestPendingSeconds: Math.max(0, Number(row.oldest ?? 0)), disabledEndpoints: Number(row.disabled) };
  }
}
