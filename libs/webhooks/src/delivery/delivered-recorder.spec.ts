import { randomUUID } from 'node:crypto';
import { OpenedEventStore, openEventStore } from '@app/event-store';
import { deliveryStream, WebhookEvents } from '../domain/event-types';
import { deliveryIdFor } from '../domain/ids';
import { webhookMigrations } from '../webhooks.migrations';
import { DeliveredRecorder } from './delivered-recorder';
import { DeliveryRepository, DeliveryRow } from './delivery.repository';

/** Batched recording of successful attempts, on the embedded database (the same SQL as PostgreSQL). */
describe('DeliveredRecorder', () => {
  let opened: OpenedEventStore;
  let deliveries: DeliveryRepository;
  let sut: DeliveredRecorder;

  beforeAll(async () => {
    opened = await openEventStore({ migrations: webhookMigrations });
    deliveries = new DeliveryRepository(opened.db, opened.store);
    sut = new DeliveredRecorder(opened.db, opened.store);
  });
  afterAll(async () => {
    await opened?.store.close();
    await opened?.db.close();
  });

  const schedule = async (n: number): Promise<DeliveryRow[]> => {
    const items = Array.from({ length: n }, () => {
      const webhookId = randomUUID();
      return {
        delivery_id: deliveryIdFor(webhookId, 'ep_1'),
        endpoint_id: 'ep_1',
        organization_id: 'org_1',
        webhook_id: webhookId,
        event_type: 'authorization.requested',
        transaction_id: 'txn_1',
        event_recorded_at: new Date().toISOString(),
        body: { id: webhookId, event_type: 'authorization.requested', transaction_id: 'txn_1', timestamp: '', actor: { type: 'system', id: 'x' }, status: 'evaluating', sequence: 1, metadata: {} },
      };
    });
    await opened.db.transaction((tx) => deliveries.scheduleManyIn(tx, items));
    return [...(await deliveries.getMany(items.map((i) => i.delivery_id))).values()];
  };
  const ok = { statusCode: 200, error: null, errorKind: null, retryAfter: null, latencyMs: 3, responseBody: 'thanks' };

  it('records concurrent successes together: the attempt event, its row, and the delivery delivered', async () => {
    const rows = await schedule(3);
    expect(await Promise.all(rows.map((d) => sut.record({ delivery: d, series: 1, result: ok })))).toEqual([true, true, true]);
    for (const d of rows) {
      const after = (await deliveries.get(d.id))!;
      expect(after).toMatchObject({ status: 'delivered', attempts: 1, series_attempts: 1, last_status_code: 200, next_attempt_at: null });
      expect(after.delivered_at).not.toBeNull();
      const events = await opened.store.readStream(deliveryStream(d.id));
      expect(events.map((e) => e.type)).toEqual([WebhookEvents.deliveryScheduled, WebhookEvents.deliveryAttempted]);
      expect(events[1].data).toMatchObject({ attempt: 1, series: 1, status_code: 200, outcome: 'delivered', current: true, response_body: 'thanks' });
      expect(Number(after.revision)).toBe(1);
      const attempts = await opened.db.query('SELECT attempt, outcome, response_body FROM webhook_delivery_attempts WHERE delivery_id = $1', [d.id]);
      expect(attempts).toEqual([{ attempt: 1, outcome: 'delivered', response_body: 'thanks' }]);
    }
  });

  it('refuses (writing nothing) an attempt whose delivery changed since it was loaded, so the caller records it under the lock', async () => {
    const [stale, fresh] = await schedule(2);
    expect(await sut.record({ delivery: stale, series: 1, result: ok })).toBe(true);
    // The same delivery as loaded before that attempt was recorded: a duplicate attempt.
    const results = await Promise.all([sut.record({ delivery: stale, series: 1, result: ok }), sut.record({ delivery: fresh, series: 1, result: ok })]);
    expect(results).toEqual([false, true]);
    expect(await opened.store.readStream(deliveryStream(stale.id))).toHaveLength(2);
    expect(Number((await deliveries.get(stale.id))!.attempts)).toBe(1);
  });
});
