import { fixedClock } from '@app/core';
import { InMemoryEventStore, RecordedEvent } from '@app/event-store';
import { CreateEndpointCommand } from './create-endpoint/create-endpoint.command';
import { CreateEndpointHandler } from './create-endpoint/create-endpoint.handler';
import { DeliverWebhookHandler } from './deliver-webhook/deliver-webhook.handler';
import type { DeliveryOptions } from './deliver-webhook/deliver-webhook.ports';
import { DeliveryRepository } from './delivery/delivery.repository';
import { AttemptRow, DeliveryPageFilter, DeliveryRow, DeliveryRows, toDue } from './delivery/delivery-rows.repository';
import { EndpointCache } from './endpoints/endpoint-cache';
import { EndpointChanges } from './endpoints/endpoint-changes.repository';
import { EndpointRepository } from './endpoints/endpoint.repository';
import { EndpointRow, EndpointRows, FanOutTarget } from './endpoints/endpoint-rows.repository';
import { EndpointSecrets, LiveSecret } from './endpoints/endpoint-secrets.repository';
import { SendTargets } from './endpoints/send-targets';
import { TargetCheck } from './endpoints/target-check';
import { DeliveryQueue, DueDelivery } from './queue/delivery-queue.port';
import type { SendResult } from './sending/http-sender';
import { TargetGuard } from './sending/target-guard';

/** Specs: the read models as the in-memory store's projections keep them (absent columns as null). */
const rowsOf = <T>(store: InMemoryEventStore, table: string, nullable: string[]) =>
  store.rows(table).map((r) => ({ ...Object.fromEntries(nullable.map((c) => [c, null])), ...r }) as unknown as T);

class InMemoryEndpointRows extends EndpointRows {
  constructor(private readonly store: InMemoryEventStore) {
    super();
  }
  private all = () => rowsOf<EndpointRow>(this.store, 'webhook_endpoints', ['disabled_reason', 'disabled_at', 'deleted_at']);
  async byId(id: string) {
    return this.all().find((r) => r.id === id) ?? null;
  }
  async list(orgId: string) {
    return this.all().filter((r) => r.org_id === orgId && !r.deleted_at);
  }
  async fanOutTargets(orgIds: string[]): Promise<FanOutTarget[]> {
    return this.all().filter((r) => orgIds.includes(r.org_id) && r.enabled && !r.deleted_at);
  }
  async failingSince(endpointId: string) {
    const row = this.store.rows('webhook_endpoint_failing').find((r) => r.endpoint_id === endpointId);
    return row ? new Date(String(row.since)) : null;
  }
}

class InMemoryDeliveryRows extends DeliveryRows {
  constructor(private readonly store: InMemoryEventStore) {
    super();
  }
  private all = () => rowsOf<DeliveryRow>(this.store, 'webhook_deliveries', ['last_attempt_at', 'last_status_code', 'last_error', 'delivered_at']);
  async byId(id: string) {
    return this.all().find((r) => r.id === id) ?? null;
  }
  async byIds(ids: string[]) {
    return new Map(this.all().filter((r) => ids.includes(r.id)).map((r) => [r.id, r]));
  }
  async page(orgId: string, f: DeliveryPageFilter) {
    return this.all()
      .filter((r) => r.org_id === orgId && (!f.endpoint_id || r.endpoint_id === f.endpoint_id) && (!f.status || r.status === f.status))
      .slice(0, f.limit + 1);
  }
  async attempts(deliveryId: string) {
    return rowsOf<AttemptRow>(this.store, 'webhook_delivery_attempts', []).filter((a) => (a as unknown as { delivery_id: string }).delivery_id === deliveryId);
  }
  async failedSince(endpointId: string, since: Date) {
    return this.all()
      .filter((r) => r.endpoint_id === endpointId && r.status === 'failed' && Date.parse(String(r.created_at)) >= since.getTime())
      .map((r) => r.id);
  }
  async *pending(): AsyncGenerator<DueDelivery[]> {
    yield this.all().filter((r) => r.status === 'pending').map(toDue);
  }
  async claimDue(limit: number, _leaseMs: number, now: Date) {
    return this.all()
      .filter((r) => r.status === 'pending' && Date.parse(String(r.next_attempt_at)) <= now.getTime())
      .slice(0, limit)
      .map(toDue);
  }
  async nextDueAt() {
    return null;
  }
}

class InMemoryEndpointSecrets extends EndpointSecrets {
  readonly secrets: { endpointId: string; secretId: string; secret: string; at: Date; expiresAt: Date | null }[] = [];
  async add(endpointId: string, secretId: string, secret: string, at: Date) {
    this.secrets.push({ endpointId, secretId, secret, at, expiresAt: null });
  }
  async discard(endpointId: string, secretId: string) {
    this.secrets.splice(this.secrets.findIndex((s) => s.endpointId === endpointId && s.secretId === secretId), 1);
  }
  async rotate(endpointId: string, secretId: string, secret: string, at: Date, until: Date) {
    for (const s of this.secrets) if (s.endpointId === endpointId && (!s.expiresAt || s.expiresAt > until)) s.expiresAt = until;
    await this.add(endpointId, secretId, secret, at);
  }
  async live(endpointId: string, at: Date): Promise<LiveSecret[]> {
    return this.secrets
      .filter((s) => s.endpointId === endpointId && (!s.expiresAt || s.expiresAt > at))
      .reverse()
      .map((s) => ({ secret: s.secret, expiresAt: s.expiresAt?.getTime() ?? null }));
  }
}

/** A queue that only remembers what it was given. */
export class RecordingQueue extends DeliveryQueue {
  readonly enqueued: DueDelivery[] = [];
  async enqueue(items: DueDelivery[]) {
    this.enqueued.push(...items);
  }
  async start() {}
  async reconcile() {
    return 0;
  }
  async stop() {}
}

export const ok: SendResult = { statusCode: 200, error: null, errorKind: null, retryAfter: null, latencyMs: 3, responseBody: 'thanks' };
export const answer = (statusCode: number, over: Partial<SendResult> = {}): SendResult => ({ ...ok, statusCode, responseBody: null, ...over });

/** An in-memory webhooks world: the store with both projections, rows, secrets, a recording queue, a fixed clock. */
export function webhooksWorld(at = '2026-11-25T10:00:00.000Z', options: DeliveryOptions = { retryScheduleMs: [5_000, 300_000], disableAfterDays: 5 }) {
  const clock = fixedClock(at);
  const store = new InMemoryEventStore(() => clock.now());
  const changes = new EndpointChanges();
  const endpoints = new EndpointRepository(store, changes);
  const deliveries = new DeliveryRepository(store);
  const endpointRows = new InMemoryEndpointRows(store);
  const deliveryRows = new InMemoryDeliveryRows(store);
  const secrets = new InMemoryEndpointSecrets();
  const queue = new RecordingQueue();
  const targets = new TargetCheck(new TargetGuard(false));
  const sendTargets = new SendTargets(endpointRows, secrets, clock);
  const cache = new EndpointCache(changes, (id) => sendTargets.load(id));
  changes.onChange(() => cache.clear());
  const sent: { url: string; body: string; headers: Record<string, string> }[] = [];
  const replies: SendResult[] = [];
  const sender = {
    send: async (url: string, body: string, headers: Record<string, string>) => {
      sent.push({ url, body, headers });
      return replies.shift() ?? ok;
    },
  };
  const signer = { sign: () => ({ key_id: 'key-1', signature: new Uint8Array(64) }) };
  const deliver = new DeliverWebhookHandler(deliveries, deliveryRows, endpoints, endpointRows, cache, sendTargets, sender, signer, options, clock);
  const createEndpoint = (orgId: string, input: Partial<CreateEndpointCommand['input']> = {}) =>
    new CreateEndpointHandler(endpoints, endpointRows, secrets, targets, clock).execute(new CreateEndpointCommand(orgId, { url: 'https://93.184.215.14/hook', ...input }));
  let revision = 0;
  /** A commerce lifecycle event as the store would have recorded it. */
  const commerceEvent = (orgId: string, type = 'authorization.requested', recordedAt = clock.now().toISOString()): RecordedEvent => ({
    event_id: `00000000-0000-4000-8000-${String(++revision).padStart(12, '0')}`,
    stream_id: 'transaction-txn_1',
    revision: 0,
    global_position: revision,
    type,
    data: { transaction_id: 'txn_1', organization_id: orgId, status: 'evaluating' },
    metadata: { actor: 'api_key:key_agent' },
    recorded_at: recordedAt,
    hash: 'sha256:x',
    prev_hash: null,
  });
  return { clock, store, changes, endpoints, deliveries, endpointRows, deliveryRows, secrets, queue, targets, cache, sendTargets, sender, sent, replies, signer, deliver, createEndpoint, commerceEvent };
}
