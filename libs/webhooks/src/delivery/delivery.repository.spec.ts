import { randomUUID } from 'node:crypto';
import { OpenedEventStore, openEventStore } from '@app/event-store';
import { foldDelivery, recordAttempt } from '../domain/delivery.aggregate';
import type { DeliveryScheduled } from '../domain/delivery.events';
import { deliveryStream, WebhookEvents } from '../domain/event-types';
import { deliveryIdFor } from '../domain/ids';
import { webhookMigrations } from '../webhooks.migrations';
import { DeliveryRepository } from './delivery.repository';
import { deliveryFromRow, SqlDeliveryRows } from './delivery-rows.repository';

/** The deliveries projection on the embedded database (the same SQL as PostgreSQL): single, batched and rebuilt. */
describe('DeliveryRepository with the deliveries projection (embedded SQL)', () => {
  let opened: OpenedEventStore;
  let deliveries: DeliveryRepository;
  let rows: SqlDeliveryRows;

  beforeAll(async () => {
    opened = await openEventStore({ migrations: webhookMigrations });
    deliveries = new DeliveryRepository(opened.store);
    rows = new SqlDeliveryRows(opened.db);
  });
  afterAll(async () => {
    await opened?.store.close();
    await opened?.db.close();
  });

  const schedule = async (n: number, endpointId: string) => {
    const items: DeliveryScheduled[] = Array.from({ length: n }, () => {
      const webhookId = randomUUID();
      return {
        delivery_id: deliveryIdFor(webhookId, endpointId),
        endpoint_id: endpointId,
        organization_id: 'org_1',
        webhook_id: webhookId,
        event_type: 'authorization.requested',
        transaction_id: 'txn_1',
        event_recorded_at: new Date().toISOString(),
        body: { id: webhookId, event_type: 'authorization.requested', transaction_id: 'txn_1', timestamp: '', actor: { type: 'system', id: 'x' }, status: 'evaluating', sequence: 1, metadata: {} },
      };
    });
    expect((await deliveries.scheduleMany(items)).map((o) => o.status)).toEqual(items.map(() => 'appended'));
    expect((await deliveries.scheduleMany(items)).map((o) => o.status)).toEqual(items.map(() => 'replay'));
    return [...(await rows.byIds(items.map((i) => i.delivery_id))).values()].map(deliveryFromRow);
  };
  const ok = { statusCode: 200, error: null, errorKind: null, retryAfter: null, latencyMs: 3, responseBody: 'thanks' };
  const failing = async (endpointId: string) => opened.db.query<{ since: Date }>('SELECT since FROM webhook_endpoint_failing WHERE endpoint_id = $1', [endpointId]);

  it('records a batch of successes to one endpoint in one appendMany: each delivered, the failure streak ended once for all', async () => {
    const endpointId = `ep_${randomUUID().replace(/-/g, '')}`;
    const [bad, ...good] = await schedule(4, endpointId);
    await deliveries.save(bad, [recordAttempt(bad, bad, 1, { ...ok, statusCode: 503, responseBody: null }, { outcome: 'retry', nextAttemptAt: new Date(Date.now() + 5000) })]);
    expect(await failing(endpointId)).toHaveLength(1);
    const appendMany = jest.spyOn(opened.store, 'appendMany');
    const recorded = await Promise.all(good.map((d) => deliveries.saveDelivered(d, recordAttempt(d, d, 1, ok, { outcome: 'delivered' }))));
    expect(recorded).toEqual([true, true, true]);
    expect(appendMany).toHaveBeenCalledTimes(1);
    expect(appendMany.mock.calls[0][0]).toHaveLength(3);
    appendMany.mockRestore();
    expect(await failing(endpointId)).toEqual([]);
    for (const d of good) {
      const row = (await rows.byId(d.id))!;
      expect(row).toMatchObject({ status: 'delivered', attempts: 1, series_attempts: 1, last_status_code: 200, next_attempt_at: null });
      expect(row.delivered_at).not.toBeNull();
      expect(Number(row.revision)).toBe(1);
      expect(await rows.attempts(d.id)).toMatchObject([{ attempt: 1, outcome: 'delivered', response_body: 'thanks' }]);
      expect((await opened.store.readStream(deliveryStream(d.id))).map((e) => e.type)).toEqual([WebhookEvents.deliveryScheduled, WebhookEvents.deliveryAttempted]);
    }
  });

  it('refuses (writing nothing) a success on a delivery that changed since it was loaded, so the caller records it the careful way', async () => {
    const [stale, fresh] = await schedule(2, 'ep_stale');
    expect(await deliveries.saveDelivered(stale, recordAttempt(stale, stale, 1, ok, { outcome: 'delivered' }))).toBe(true);
    const results = await Promise.all([
      deliveries.saveDelivered(stale, recordAttempt(stale, stale, 1, ok, { outcome: 'delivered' })),
      deliveries.saveDelivered(fresh, recordAttempt(fresh, fresh, 1, ok, { outcome: 'delivered' })),
    ]);
    expect(results).toEqual([false, true]);
    expect(await opened.store.readStream(deliveryStream(stale.id))).toHaveLength(2);
    expect((await rows.byId(stale.id))!.attempts).toBe(1);
  });

  it('claims due deliveries once each (a lease), and a recorded attempt ends the lease', async () => {
    const [d] = await schedule(1, 'ep_lease');
    const now = new Date(Date.now() + 1000);
    const first = await rows.claimDue(1000, 60_000, now);
    expect(first.map((x) => x.id)).toContain(d.id);
    expect((await rows.claimDue(1000, 60_000, now)).map((x) => x.id)).not.toContain(d.id);
    await deliveries.save(d, [recordAttempt(d, d, 1, { ...ok, statusCode: 500 }, { outcome: 'retry', nextAttemptAt: now })]);
    expect((await rows.claimDue(1000, 60_000, now)).map((x) => x.id)).toContain(d.id);
  });

  it('rebuilds the deliveries, their attempts and the failure streaks from the stored events to the same rows', async () => {
    const [d] = await schedule(1, 'ep_rebuild');
    await deliveries.save(d, [recordAttempt(d, d, 1, { ...ok, statusCode: 500 }, { outcome: 'retry', nextAttemptAt: new Date() })]);
    const s1 = foldDelivery(await opened.store.readStream(deliveryStream(d.id)))!;
    await deliveries.save(s1, [recordAttempt(s1, s1, 1, ok, { outcome: 'delivered' })]);
    const s2 = foldDelivery(await opened.store.readStream(deliveryStream(d.id)))!;
    await deliveries.save(s2, [recordAttempt(s2, s2, 1, { ...ok, statusCode: 500 }, { outcome: 'failed', reason: 'non_retryable', disableEndpoint: false })]);
    const snapshot = async () => ({
      deliveries: await opened.db.query('SELECT * FROM webhook_deliveries ORDER BY id'),
      attempts: await opened.db.query('SELECT * FROM webhook_delivery_attempts ORDER BY delivery_id, attempt'),
      failing: await opened.db.query('SELECT * FROM webhook_endpoint_failing ORDER BY endpoint_id'),
    });
    const before = await snapshot();
    expect(before.failing.map((r) => (r as { endpoint_id: string }).endpoint_id)).toContain('ep_rebuild');
    await opened.store.rebuildProjection('webhook_deliveries');
    expect(await snapshot()).toEqual(before);
  });
});
