import type { Logger } from '@app/http';
import { SqlDatabase, SqlEventStore, SqlExecutor } from '@app/event-store';
import { WebhookEvents } from '../domain/event-types';
import { decide, Decision, failingTooLong } from '../domain/retry';
import { signWebhook, WebhookSigner } from '../domain/signing';
import { EndpointDisabled } from '../endpoints/endpoint.events';
import { EndpointCache, secretsAt, SendTarget } from '../endpoints/endpoint-cache';
import { EndpointService, lockEndpoint, recordEndpointEvents } from '../endpoints/endpoint.service';
import { HttpSender, SendResult } from '../sending/http-sender';
import { Batcher } from '@app/core';
import { DeliveredRecorder } from './delivered-recorder';
import { DeliveryAbandoned, DeliveryAttempted } from './delivery.events';
import { DeliveryRepository, DeliveryRow, recordDeliveryEvents } from './delivery.repository';

type TargetCheck = { ok: true; target: SendTarget } | { ok: false; why: DeliveryAbandoned['reason'] };
const check = (t: SendTarget | null): TargetCheck =>
  !t || t.deleted ? { ok: false, why: 'endpoint_deleted' } : !t.enabled ? { ok: false, why: 'endpoint_disabled' } : { ok: true, target: t };

/** What a queue does with a delivery after one run: nothing more, or run it again at `at`. */
export type RunResult = { next: 'none' } | { next: 'later'; at: Date };

export interface ProcessorOptions {
  retryScheduleMs: readonly number[];
  disableAfterDays: number;
}

/**
 * One attempt of one delivery, the same code whichever queue runs it (BullMQ or the store
 * scheduler): load it, skip it if it is finished or belongs to an older series, sign, send,
 * decide, and record the attempt (event + read model, atomically). The store, not the queue,
 * says when a delivery is due, so a queue that lost or duplicated jobs cannot change the
 * schedule, only cause an extra attempt (at-least-once).
 *
 * Throughput: concurrent attempts share their statements. Loads go in batches (one query for
 * all the deliveries starting together), the endpoint and its decrypted secrets come from the
 * EndpointCache, and successful attempts are recorded in batches by the DeliveredRecorder (one
 * statement for many). Failures, rarer and with more to decide, take the locked path alone.
 */
export class DeliveryProcessor {
  private readonly loader: Batcher<string, DeliveryRow | null>;
  private readonly delivered: DeliveredRecorder;

  constructor(
    private readonly db: SqlDatabase,
    private readonly store: SqlEventStore,
    private readonly deliveries: DeliveryRepository,
    private readonly endpoints: EndpointService,
    private readonly targets: EndpointCache,
    private readonly sender: HttpSender,
    private readonly signer: WebhookSigner,
    private readonly options: ProcessorOptions,
    private readonly logger?: Logger,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.loader = new Batcher(
      async (ids) => {
        const rows = await this.deliveries.getMany([...new Set(ids)]);
        return ids.map((id) => rows.get(id) ?? null);
      },
      { maxBatch: 500, maxInFlight: 2 },
    );
    this.delivered = new DeliveredRecorder(db, store, {}, logger);
  }

  async run(deliveryId: string, series: number): Promise<RunResult> {
    const d = await this.loader.add(deliveryId);
    if (!d || d.status !== 'pending' || Number(d.series) !== series) return { next: 'none' };
    const due = d.next_attempt_at ? new Date(d.next_attempt_at) : this.now();
    if (due.getTime() > this.now().getTime() + 20) return { next: 'later', at: due };

    const endpoint = await this.target(d);
    if (!endpoint) return { next: 'none' };

    const sentAt = this.now();
    const headers = signWebhook(d.event_id, Math.floor(sentAt.getTime() / 1000), d.body, secretsAt(endpoint, sentAt), this.signer);
    const result = await this.sender.send(endpoint.url, d.body, { ...headers });
    const decision = decide(result, Number(d.series_attempts) + 1, this.options.retryScheduleMs, this.now());
    if (decision.outcome === 'delivered' && (await this.delivered.record({ delivery: d, series, result }))) return { next: 'none' };
    const current = await this.record(d, series, result, decision);
    return current && decision.outcome === 'retry' ? { next: 'later', at: decision.nextAttemptAt } : { next: 'none' };
  }

  /** The endpoint to send to; null once the delivery has been abandoned (endpoint disabled or deleted). */
  private async target(d: DeliveryRow): Promise<SendTarget | null> {
    const cached = check(await this.targets.get(d.endpoint_id));
    if (cached.ok) return cached.target;
    // Never abandon on the word of the cache: it may not have heard of a re-enabling yet.
    const fresh = check(await this.endpoints.sendTarget(d.endpoint_id));
    if (fresh.ok) {
      this.targets.clear();
      return fresh.target;
    }
    await this.abandon(d, fresh.why);
    return null;
  }

  /** Records the attempt; returns whether it still drove the delivery (see DeliveryAttempted.current). */
  private async record(d: DeliveryRow, series: number, result: SendResult, decision: Decision): Promise<boolean> {
    let disabled = false;
    const current = await this.db.transaction(async (tx) => {
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
        disabled = await this.disableEndpoint(tx, d.endpoint_id, { reason: 'gone', delivery_id: d.id });
      } else {
        const [ep] = await tx.query<{ failing_since: Date | string | null; enabled: boolean }>('SELECT failing_since, enabled FROM webhook_endpoints WHERE id = $1', [
          d.endpoint_id,
        ]);
        const since = ep?.failing_since ? new Date(ep.failing_since) : null;
        if (ep?.enabled && failingTooLong(since, this.now(), this.options.disableAfterDays)) {
          disabled = await this.disableEndpoint(tx, d.endpoint_id, { reason: 'failing', failing_since: since!.toISOString() });
        }
      }
      return current;
    });
    if (disabled) await this.endpoints.announceChange();
    return current;
  }

  private async disableEndpoint(tx: SqlExecutor, endpointId: string, why: Pick<EndpointDisabled, 'reason' | 'delivery_id' | 'failing_since'>): Promise<boolean> {
    const ep = await lockEndpoint(tx, endpointId);
    if (!ep || !ep.enabled) return false;
    const data: EndpointDisabled = { endpoint_id: endpointId, organization_id: ep.org_id, ...why };
    await recordEndpointEvents(this.store, tx, endpointId, Number(ep.revision), [{ type: WebhookEvents.endpointDisabled, data }]);
    this.logger?.warn({ endpoint_id: endpointId, reason: why.reason }, 'webhook endpoint disabled');
    return true;
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
