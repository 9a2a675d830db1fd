import { abandonDelivery, foldDelivery, ownedDelivery, recordAttempt, requestRedelivery, scheduleDelivery, SentAttempt } from './delivery.aggregate';
import type { DeliveryScheduled } from './delivery.events';
import { WebhookEvents } from './event-types';
import { decide } from './retry';

const scheduled: DeliveryScheduled = {
  delivery_id: 'dlv_1',
  endpoint_id: 'ep_1',
  organization_id: 'org_a',
  webhook_id: '5f0c6c7e-0000-4000-8000-000000000001',
  event_type: 'authorization.requested',
  transaction_id: 'txn_1',
  event_recorded_at: '2026-11-25T10:00:00.000Z',
  body: { id: '5f0c6c7e-0000-4000-8000-000000000001', event_type: 'authorization.requested', transaction_id: 'txn_1', timestamp: '', actor: { type: 'system', id: 'x' }, status: 'evaluating', sequence: 1, metadata: {} },
};
const now = new Date('2026-11-25T10:00:00Z');
const schedule = [5_000, 300_000];
const sent = (statusCode: number | null, over: Partial<SentAttempt> = {}): SentAttempt => ({ statusCode, error: null, errorKind: null, retryAfter: null, latencyMs: 4, responseBody: null, ...over });

describe('Delivery aggregate', () => {
  const first = scheduleDelivery(scheduled);
  const s0 = foldDelivery([first])!;

  it('is scheduled once per delivery id: the event id derives from it', () => {
    expect(first).toEqual({ event_id: scheduleDelivery({ ...scheduled }).event_id, type: WebhookEvents.deliveryScheduled, data: scheduled });
    expect(scheduleDelivery({ ...scheduled, delivery_id: 'dlv_2' }).event_id).not.toBe(first.event_id);
    expect(s0).toMatchObject({ id: 'dlv_1', status: 'pending', series: 1, series_attempts: 0, attempts: 0, revision: 0, event_id: scheduled.webhook_id });
  });

  it('records attempts with the retry decision: retry, then delivered', () => {
    const retry = recordAttempt(s0, s0, 1, sent(503), decide(sent(503), 1, schedule, now));
    expect(retry.data).toMatchObject({ attempt: 1, series: 1, series_attempt: 1, outcome: 'retry', next_attempt_at: '2026-11-25T10:00:05.000Z', current: true, status_code: 503 });
    const s1 = foldDelivery([first, retry])!;
    expect(s1).toMatchObject({ status: 'pending', attempts: 1, series_attempts: 1, next_attempt_at: '2026-11-25T10:00:05.000Z', revision: 1 });
    const done = recordAttempt(s1, s1, 1, sent(200), decide(sent(200), 2, schedule, now));
    expect(foldDelivery([first, retry, done])).toMatchObject({ status: 'delivered', attempts: 2, series_attempts: 2 });
  });

  it('fails for good on a non-retryable answer or when the retries are exhausted', () => {
    expect(recordAttempt(s0, s0, 1, sent(400), decide(sent(400), 1, schedule, now)).data).toMatchObject({ outcome: 'failed', next_attempt_at: null });
    const exhausted = { ...s0, series_attempts: 2, attempts: 2 };
    expect(recordAttempt(exhausted, exhausted, 1, sent(500), decide(sent(500), 3, schedule, now)).data).toMatchObject({ outcome: 'failed', attempt: 3 });
  });

  it('records an attempt that no longer drives the delivery (a redelivery began, a duplicate won) as not current: it changes no state', () => {
    const movedOn = { ...s0, status: 'delivered' as const, attempts: 1, series_attempts: 1, revision: 1 };
    const late = recordAttempt(s0, movedOn, 1, sent(200), decide(sent(200), 1, schedule, now));
    expect(late.data).toMatchObject({ attempt: 2, current: false });
    const folded = foldDelivery([first, recordAttempt(s0, s0, 1, sent(200), { outcome: 'delivered' }), late])!;
    expect(folded).toMatchObject({ status: 'delivered', attempts: 2, series_attempts: 1 });
  });

  it('is abandoned when its endpoint is gone, only while pending in that series', () => {
    expect(abandonDelivery(s0, 1, 'endpoint_deleted')).toEqual([
      { type: WebhookEvents.deliveryAbandoned, data: { delivery_id: 'dlv_1', endpoint_id: 'ep_1', organization_id: 'org_a', series: 1, reason: 'endpoint_deleted' } },
    ]);
    expect(abandonDelivery(s0, 2, 'endpoint_deleted')).toEqual([]);
    expect(abandonDelivery({ ...s0, status: 'failed' }, 1, 'endpoint_disabled')).toEqual([]);
    expect(foldDelivery([first, ...abandonDelivery(s0, 1, 'endpoint_disabled')])).toMatchObject({ status: 'failed' });
  });

  it('is redelivered (a new series) once finished; a recovery takes only failed ones', () => {
    expect(() => requestRedelivery(s0, 'api_key:k', { onlyFailed: false })).toThrow(expect.objectContaining({ code: 'webhook_delivery_pending' }));
    const delivered = { ...s0, status: 'delivered' as const, series_attempts: 1 };
    const again = requestRedelivery(delivered, 'api_key:k', { onlyFailed: false });
    expect(again[0]).toEqual({ type: WebhookEvents.redeliveryRequested, data: { delivery_id: 'dlv_1', endpoint_id: 'ep_1', organization_id: 'org_a', series: 2, requested_by: 'api_key:k' } });
    expect(() => requestRedelivery(delivered, 'api_key:k', { onlyFailed: true })).toThrow(expect.objectContaining({ code: 'webhook_delivery_pending' }));
    expect(requestRedelivery({ ...s0, status: 'failed' }, 'api_key:k', { onlyFailed: true })).toHaveLength(1);
    expect(foldDelivery([first, recordAttempt(s0, s0, 1, sent(200), { outcome: 'delivered' }), ...again])).toMatchObject({ status: 'pending', series: 2, series_attempts: 0, revision: 2 });
  });

  it("answers another organization's delivery like a missing one", () => {
    expect(() => ownedDelivery(s0, 'org_b', 'dlv_1')).toThrow(expect.objectContaining({ code: 'not_found', message: 'webhook delivery dlv_1 not found' }));
    expect(() => ownedDelivery(null, 'org_a', 'dlv_1')).toThrow(expect.objectContaining({ code: 'not_found' }));
  });
});
