import { Inject, Optional } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { Batcher, Clock, LOGGER } from '@app/core';
import type { Logger } from '@app/http';
import { Metrics } from '@app/metrics';
import { abandonDelivery, DeliveryState, recordAttempt, SentAttempt } from '../domain/delivery.aggregate';
import type { DeliveryAbandoned } from '../domain/delivery.events';
import type { EndpointDisabled } from '../domain/endpoint.events';
import { disableEndpoint } from '../domain/endpoint.aggregate';
import { decide, Decision, failingTooLong } from '../domain/retry';
import { signWebhook } from '../domain/signing';
import { DeliveryRepository } from '../delivery/delivery.repository';
import { deliveryFromRow, DeliveryRow, DeliveryRows } from '../delivery/delivery-rows.repository';
import { EndpointCache, secretsAt, SendTarget } from '../endpoints/endpoint-cache';
import { EndpointRepository } from '../endpoints/endpoint.repository';
import { EndpointRows } from '../endpoints/endpoint-rows.repository';
import { SendTargets } from '../endpoints/send-targets';
import type { RunResult } from '../queue/delivery-queue.port';
import { WEBHOOKS_CLOCK } from '../webhooks.tokens';
import { DeliverWebhookCommand } from './deliver-webhook.command';
import { DELIVERY_OPTIONS, DeliveryOptions, ServiceWebhookSigner, WebhookSender } from './deliver-webhook.ports';
import { retryOnConflict } from '@app/event-store';

type TargetCheck = { ok: true; target: SendTarget } | { ok: false; why: DeliveryAbandoned['reason'] };
const check = (t: SendTarget | null): TargetCheck =>
  !t || t.deleted ? { ok: false, why: 'endpoint_deleted' } : !t.enabled ? { ok: false, why: 'endpoint_disabled' } : { ok: true, target: t };

/**
 * One attempt of one delivery, whichever queue runs it (BullMQ or the store scheduler): load it,
 * skip it if it is finished or belongs to an older series, sign, send, let the aggregate record
 * the outcome (retry schedule by `decide`), save. The store, not the queue, says when a delivery
 * is due, so a queue that lost or duplicated jobs cannot change the schedule, only cause an
 * extra attempt (at-least-once).
 *
 * Throughput: loads go in batches (one query for the deliveries starting together), the endpoint
 * and its decrypted secrets come from the EndpointCache, and successes are saved in batches at the
 * revision loaded (one appendMany for many). A success whose delivery changed meanwhile, and every
 * failure (rarer, with more to decide), take the careful path: reload, decide, save, alone.
 */
@CommandHandler(DeliverWebhookCommand)
export class DeliverWebhookHandler implements ICommandHandler<DeliverWebhookCommand, RunResult> {
  private readonly loader: Batcher<string, DeliveryRow | null>;

  constructor(
    private readonly deliveries: DeliveryRepository,
    private readonly rows: DeliveryRows,
    private readonly endpoints: EndpointRepository,
    private readonly endpointRows: EndpointRows,
    private readonly targets: EndpointCache,
    private readonly sendTargets: SendTargets,
    private readonly sender: WebhookSender,
    private readonly signer: ServiceWebhookSigner,
    @Inject(DELIVERY_OPTIONS) private readonly options: DeliveryOptions,
    @Inject(WEBHOOKS_CLOCK) private readonly clock: Clock,
    @Optional() @Inject(LOGGER) private readonly logger?: Logger,
    @Optional() private readonly metrics?: Metrics,
  ) {
    this.loader = new Batcher(
      async (ids) => {
        const found = await this.rows.byIds([...new Set(ids)]);
        return ids.map((id) => found.get(id) ?? null);
      },
      { maxBatch: 500, maxInFlight: 2 },
    );
  }

  async execute({ deliveryId, series }: DeliverWebhookCommand): Promise<RunResult> {
    const row = await this.loader.add(deliveryId);
    if (!row || row.status !== 'pending' || Number(row.series) !== series) return { next: 'none' };
    const d = deliveryFromRow(row);
    const due = d.next_attempt_at ? new Date(d.next_attempt_at) : this.clock.now();
    if (due.getTime() > this.clock.now().getTime() + 20) return { next: 'later', at: due };

    const endpoint = await this.target(d);
    if (!endpoint) {
      this.metrics?.webhookDelivery('abandoned', d.series_attempts + 1);
      return { next: 'none' };
    }

    const sentAt = this.clock.now();
    const headers = signWebhook(d.event_id, Math.floor(sentAt.getTime() / 1000), d.body, secretsAt(endpoint, sentAt), this.signer);
    const result: SentAttempt = await this.sender.send(endpoint.url, d.body, { ...headers });
    const decision = decide(result, d.series_attempts + 1, this.options.retryScheduleMs, this.clock.now());
    this.metrics?.webhookDelivery(decision.outcome, d.series_attempts + 1, decision.outcome === 'delivered' ? (Date.now() - new Date(row.event_recorded_at).getTime()) / 1000 : undefined);
    if (decision.outcome === 'delivered' && (await this.deliveries.saveDelivered(d, recordAttempt(d, d, series, result, decision)))) return { next: 'none' };
    const current = await this.record(d, series, result, decision);
    return current && decision.outcome === 'retry' ? { next: 'later', at: decision.nextAttemptAt } : { next: 'none' };
  }

  /** The endpoint to send to; null once the delivery has been abandoned (endpoint disabled or deleted). */
  private async target(d: DeliveryState): Promise<SendTarget | null> {
    const cached = check(await this.targets.get(d.endpoint_id));
    if (cached.ok) return cached.target;
    // Never abandon on the word of the cache: it may not have heard of a re-enabling yet.
    const fresh = check(await this.sendTargets.load(d.endpoint_id));
    if (fresh.ok) {
      this.targets.clear();
      return fresh.target;
    }
    await retryOnConflict(async () => {
      const now = await this.current(d.id);
      if (now) await this.save(now, abandonDelivery(now, d.series, fresh.why));
    });
    return null;
  }

  /** Records the attempt on the delivery as it is now; answers whether it still drove the delivery. */
  private async record(loaded: DeliveryState, series: number, result: SentAttempt, decision: Decision): Promise<boolean> {
    const current = await retryOnConflict(async () => {
      const now = (await this.current(loaded.id))!;
      const event = recordAttempt(loaded, now, series, result, decision);
      await this.deliveries.save(now, [event]);
      return (event.data as { current: boolean }).current;
    });
    if (decision.outcome === 'delivered') return current;
    if (decision.outcome === 'failed' && decision.disableEndpoint) {
      await this.disable(loaded.endpoint_id, { reason: 'gone', delivery_id: loaded.id });
    } else {
      const since = await this.endpointRows.failingSince(loaded.endpoint_id);
      if (failingTooLong(since, this.clock.now(), this.options.disableAfterDays)) await this.disable(loaded.endpoint_id, { reason: 'failing', failing_since: since!.toISOString() });
    }
    return current;
  }

  private async disable(endpointId: string, why: Pick<EndpointDisabled, 'reason' | 'delivery_id' | 'failing_since'>): Promise<void> {
    await retryOnConflict(async () => {
      const state = await this.endpoints.load(endpointId);
      const events = disableEndpoint(state, why);
      if (events.length === 0) return;
      await this.endpoints.save(state!, events);
      this.logger?.warn({ endpoint_id: endpointId, reason: why.reason }, 'webhook endpoint disabled');
    });
  }

  private async current(id: string): Promise<DeliveryState | null> {
    const row = await this.rows.byId(id);
    return row ? deliveryFromRow(row) : null;
  }

  private async save(state: DeliveryState, events: ReturnType<typeof abandonDelivery>): Promise<void> {
    if (events.length > 0) await this.deliveries.save(state, events);
  }
}
