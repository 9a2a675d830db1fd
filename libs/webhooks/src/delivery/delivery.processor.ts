import type { Logger } from '@app/http';
import { SqlDatabase, SqlEventStore, SqlExecutor } from '@app/event-store';
import { WebhookEvents } from '../domain/event-types';
import { decide, Decision, failingTooLong } from '../domain/retry';
import { signWebhook, WebhookSigner } from '../domain/signing';
import { EndpointDisabled } from '../endpoints/endpoint.events';
import { EndpointRow, EndpointService, lockEndpoint, recordEndpointEvents } from '../endpoints/endpoint.service';
import { HttpSender, SendResult } from '../sending/http-sender';
import { DeliveryAbandoned, DeliveryAttempted } from './delivery.events';
import { DeliveryRepository, DeliveryRow, recordDeliveryEvents } from './delivery.repository';

/** What a queue does with a delivery after one run: nothing more, or run it again at `at`. */
export type RunResult = { next: 'none' } | { next: 'later'; at: Date };

export interface ProcessorOptions {
  retryScheduleMs: readonly number[];
  disableAfterDays: number;
}

/**
 * One attempt of one delivery, the same code whichever queue runs it (BullMQ or the store
 * scheduler): load it, skip it if it is finished or belongs to an older series, sign, send,
 * decide, and record the attempt (event + read model, one transaction). The store, not the
 * queue, says when a delivery is due, so a queue that lost or duplicated jobs cannot change
 * the schedule, only cause an extra attempt (at-least-once).
 */
export class DeliveryProcessor {
  constructor(
    private readonly db: SqlDatabase,
    private readonly store: SqlEventStore,
    private readonly deliveries: DeliveryRepository,
    private readonly endpoints: EndpointService,
    private readonly sender: HttpSender,
    private readonly signer: WebhookSigner,
    private readonly options: ProcessorOptions,
    private readonly logger?: Logger,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async run(deliveryId: string, series: number): Promise<RunResult> {
    const d = await this.deliveries.get(deliveryId);
    if (!d || d.status !== 'pending' || Number(d.series) !== series) return { next: 'none' };
    const due = d.next_attempt_at ? new Date(d.next_attempt_at) : this.now();
    if (due.getTime() > this.now().getTime() + 20) return { next: 'later', at: due };

    const [endpoint] = await this.db.query<EndpointRow>('SELECT * FROM webhook_endpoints WHERE id = $1', [d.endpoint_id], { name: 'webhook_endpoint_by_id' });
    if (!endpoint || endpoint.deleted_at || !endpoint.enabled) {
      await this.abandon(d, !endpoint || endpoint.deleted_at ? 'endpoint_deleted' : 'endpoint_disabled');
      return { next: 'none' };
    }

    const sentAt = this.now();
    const secrets = await this.endpoints.liveSecrets(endpoint.id, sentAt);
    const headers = signWebhook(d.event_id, Math.floor(sentAt.getTime() / 1000), d.body, secrets, this.signer);
    const result = await this.sender.send(endpoint.url, d.body, { ...headers });
    const decision = decide(result, Number(d.series_attempts) + 1, this.options.retryScheduleMs, this.now());
    const current = await this.record(d, series, result, decision);
    return current && decision.outcome === 'retry' ? { next: 'later', at: decision.nextAttemptAt } : { next: 'none' };
  }

  /** Records the attempt; returns whether it still drove the delivery (see DeliveryAttempted.current). */
  private async record(d: DeliveryRow, series: number, result: SendResult, decision: Decision): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      const row = (await this.deliveries.lock(tx, d.id))!;
      const current = row.status === 'pending' && Number(row.series) === series && Number(row.series_attempts) === Number(d.series_attempts);
      const data: DeliveryAttempted = {
        delivery_id: d.id,
        endpoint_id: d.endpoint_id,
        organization_id: d.org_id,
        webhook_id: d.event_id,
        attempt: Number(row.attempts) + 1,
        series,
        status_code: result.statusCode,
        latency_ms: result.latencyMs,
        error: result.error,
        response_body: result.responseBody,
        outcome: decision.outcome,
        next_attempt_at: decision.outcome === 'retry' ? decision.nextAttemptAt.toISOString() : null,
        current,
      };
      await recordDeliveryEvents(this.store, tx, d.id, Number(row.revision), [{ type: WebhookEvents.deliveryAttempted, data }]);
      if (decision.outcome === 'delivered') return current;
      if (decision.outcome === 'failed' && decision.disableEndpoint) {
        await this.disableEndpoint(tx, d.endpoint_id, { reason: 'gone', delivery_id: d.id });
      } else {
        const [ep] = await tx.query<{ failing_since: Date | string | null; enabled: boolean }>('SELECT failing_since, enabled FROM webhook_endpoints WHERE id = $1', [
          d.endpoint_id,
        ]);
        const since = ep?.failing_since ? new Date(ep.failing_since) : null;
        if (ep?.enabled && failingTooLong(since, this.now(), this.options.disableAfterDays)) {
          await this.disableEndpoint(tx, d.endpoint_id, { reason: 'failing', failing_since: since!.toISOString() });
        }
      }
      return current;
    });
  }

  private async disableEndpoint(tx: SqlExecutor, endpointId: string, why: Pick<EndpointDisabled, 'reason' | 'delivery_id' | 'failing_since'>): Promise<void> {
    const ep = await lockEndpoint(tx, endpointId);
    if (!ep || !ep.enabled) return;
    const data: EndpointDisabled = { endpoint_id: endpointId, organization_id: ep.org_id, ...why };
    await recordEndpointEvents(this.store, tx, endpointId, Number(ep.revision), [{ type: WebhookEvents.endpointDisabled, data }]);
    this.logger?.warn({ endpoint_id: endpointId, reason: why.reason }, 'webhook endpoint disabled');
  }

  private async abandon(d: DeliveryRow, reason: DeliveryAbandoned['reason']): Promise<void> {
    await this.db.transaction(async (tx) => {
      const row = await this.deliveries.lock(tx, d.id);
      if (!row || row.status !== 'pending' || Number(row.series) !== Number(d.series)) return;
      const data: DeliveryAbandoned = { delivery_id: d.id, endpoint_id: d.endpoint_id, organization_id: d.org_id, series: Number(d.series), reason };
      await recordDeliveryEvents(this.store, tx, d.id, Number(row.revision), [{ type: WebhookEvents.deliveryAbandoned, data }]);
    });
  }
}
