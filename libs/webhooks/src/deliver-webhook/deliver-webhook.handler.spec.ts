import { deliveryStream, endpointStream, WebhookEvents } from '../domain/event-types';
import { ScheduleDeliveriesCommand } from '../schedule-deliveries/schedule-deliveries.command';
import { ScheduleDeliveriesHandler } from '../schedule-deliveries/schedule-deliveries.handler';
import { answer, webhooksWorld } from '../webhook-spec-fixtures';
import { DeliverWebhookCommand } from './deliver-webhook.command';

describe('DeliverWebhookHandler (one attempt: load, sign, send, the aggregate records it, save)', () => {
  const setup = async (options?: Parameters<typeof webhooksWorld>[1]) => {
    const w = webhooksWorld(undefined, options);
    const ep = await w.createEndpoint('org_a');
    const fanOut = new ScheduleDeliveriesHandler(w.endpointRows, w.deliveries, w.deliveryRows, w.queue);
    const schedule = async (n = 1) => {
      w.clock.advance(1);
      await fanOut.execute(new ScheduleDeliveriesCommand(Array.from({ length: n }, () => w.commerceEvent('org_a'))));
      return w.queue.enqueued.splice(0);
    };
    const run = (id: string, series = 1) => w.deliver.execute(new DeliverWebhookCommand(id, series));
    return { ...w, ep, schedule, run };
  };

  it('signs and sends the body, and records concurrent successes together: delivered, with the attempt in the history', async () => {
    const { schedule, run, sent, store, deliveryRows } = await setup();
    const due = await schedule(3);
    expect(await Promise.all(due.map((d) => run(d.id)))).toEqual([{ next: 'none' }, { next: 'none' }, { next: 'none' }]);
    expect(sent).toHaveLength(3);
    expect(sent[0].headers).toMatchObject({ 'webhook-id': expect.any(String), 'webhook-timestamp': expect.any(String), 'webhook-signature': expect.stringContaining('v1,') });
    for (const d of due) {
      expect(await deliveryRows.byId(d.id)).toMatchObject({ status: 'delivered', attempts: 1, series_attempts: 1, last_status_code: 200, next_attempt_at: null, revision: 1 });
      expect((await store.readStream(deliveryStream(d.id)))[1]).toMatchObject({ type: WebhookEvents.deliveryAttempted, data: { outcome: 'delivered', current: true, response_body: 'thanks' } });
      expect(await deliveryRows.attempts(d.id)).toMatchObject([{ attempt: 1, outcome: 'delivered', status_code: 200 }]);
    }
  });

  it('schedules a retry on a 5xx (the failure streak starts), a success ends the streak; a finished delivery is not sent again', async () => {
    const { schedule, run, replies, clock, deliveryRows, endpointRows, ep } = await setup();
    const [d] = await schedule();
    replies.push(answer(503));
    expect(await run(d.id)).toEqual({ next: 'later', at: new Date(clock.now().getTime() + 5_000) });
    expect(await deliveryRows.byId(d.id)).toMatchObject({ status: 'pending', attempts: 1, last_status_code: 503 });
    expect(await endpointRows.failingSince(ep.id)).toEqual(clock.now());
    expect(await run(d.id)).toMatchObject({ next: 'later' }); // not due yet: nothing sent
    clock.advance(5_000);
    expect(await run(d.id)).toEqual({ next: 'none' });
    expect(await deliveryRows.byId(d.id)).toMatchObject({ status: 'delivered', attempts: 2, series_attempts: 2 });
    expect(await endpointRows.failingSince(ep.id)).toBeNull();
    expect(await run(d.id)).toEqual({ next: 'none' });
    expect(await run(d.id, 2)).toEqual({ next: 'none' });
  });

  it('disables the endpoint on 410 Gone, and abandons the deliveries left for it', async () => {
    const { schedule, run, replies, store, deliveryRows, ep, sent } = await setup();
    const [gone, left] = await schedule(2);
    replies.push(answer(410));
    expect(await run(gone.id)).toEqual({ next: 'none' });
    expect(await deliveryRows.byId(gone.id)).toMatchObject({ status: 'failed', last_status_code: 410 });
    expect((await store.readStream(endpointStream(ep.id))).at(-1)).toMatchObject({ type: WebhookEvents.endpointDisabled, data: { reason: 'gone', delivery_id: gone.id } });
    expect(await run(left.id)).toEqual({ next: 'none' });
    expect(await deliveryRows.byId(left.id)).toMatchObject({ status: 'failed', last_error: 'endpoint_disabled' });
    expect(sent).toHaveLength(1);
  });

  it('disables an endpoint whose attempts have all failed for longer than the limit', async () => {
    const { schedule, run, replies, clock, endpointRows, ep } = await setup({ retryScheduleMs: [1_000, 1_000, 1_000], disableAfterDays: 1 });
    const [d] = await schedule();
    replies.push(answer(500));
    await run(d.id);
    clock.advance(86_400_000);
    replies.push(answer(500));
    await run(d.id);
    expect(await endpointRows.byId(ep.id)).toMatchObject({ enabled: false, disabled_reason: 'failing' });
  });

  it('records an attempt whose delivery moved on meanwhile (a duplicate attempt) as not current, changing nothing', async () => {
    const { schedule, run, deliveryRows, store } = await setup();
    const [d] = await schedule();
    const [a, b] = await Promise.all([run(d.id), run(d.id)]);
    expect([a, b]).toEqual([{ next: 'none' }, { next: 'none' }]);
    const events = await store.readStream(deliveryStream(d.id));
    expect(events.map((e) => (e.data as { current?: boolean }).current)).toEqual([undefined, true, false]);
    expect(await deliveryRows.byId(d.id)).toMatchObject({ status: 'delivered', attempts: 2, series_attempts: 1 });
  });
});
