import { WebhookEvents } from '../domain/event-types';
import { deliveriesProjection } from './delivery.projection';

const attempted = (over: Record<string, unknown>) => ({
  event_id: 'e1',
  stream_id: 'webhook-delivery-dlv_1',
  type: WebhookEvents.deliveryAttempted,
  metadata: {},
  recorded_at: '2026-11-25T10:00:00.000Z',
  data: { delivery_id: 'dlv_1', endpoint_id: 'ep_1', organization_id: 'org_a', webhook_id: 'w', attempt: 3, series: 1, status_code: 200, latency_ms: 1, error: null, response_body: null, outcome: 'delivered', next_attempt_at: null, current: true, ...over },
});

describe('deliveriesProjection', () => {
  it('writes the attempt, the delivery state and the end of the failure streak; a failure starts a streak unless one runs', () => {
    const changes = deliveriesProjection.apply(attempted({ series_attempt: 2 }));
    expect(changes.map((c) => [c.op, c.table])).toEqual([
      ['insert', 'webhook_delivery_attempts'],
      ['update', 'webhook_deliveries'],
      ['delete', 'webhook_endpoint_failing'],
    ]);
    expect(changes[1]).toMatchObject({ set: { status: 'delivered', series_attempts: 2, attempts: 3, delivered_at: '2026-11-25T10:00:00.000Z' } });
    const failed = deliveriesProjection.apply(attempted({ series_attempt: 1, outcome: 'retry', status_code: 503 }));
    expect(failed[2]).toEqual({ op: 'insert', table: 'webhook_endpoint_failing', key: ['endpoint_id'], row: { endpoint_id: 'ep_1', since: '2026-11-25T10:00:00.000Z' } });
  });

  it('changes no delivery state for an attempt that was not current, and reads events recorded before series_attempt with a plain value', () => {
    expect(deliveriesProjection.apply(attempted({ current: false }))[1]).not.toHaveProperty('set.status');
    expect(deliveriesProjection.apply(attempted({}))[1]).toMatchObject({ set: { series_attempts: 3 } });
  });

  it('ends the streak when its endpoint is re-enabled, and only then', () => {
    const updated = (data: Record<string, unknown>) => ({ ...attempted({}), stream_id: 'webhook-endpoint-ep_1', type: WebhookEvents.endpointUpdated, data: { endpoint_id: 'ep_1', organization_id: 'org_a', ...data } });
    expect(deliveriesProjection.apply(updated({ enabled: true }))).toEqual([{ op: 'delete', table: 'webhook_endpoint_failing', key: { endpoint_id: 'ep_1' } }]);
    expect(deliveriesProjection.apply(updated({ enabled: false }))).toEqual([]);
    expect(deliveriesProjection.apply(updated({ url: 'https://x' }))).toEqual([]);
  });
});
