import { DeliverWebhookCommand } from '../deliver-webhook/deliver-webhook.command';
import { deliveryStream, WebhookEvents } from '../domain/event-types';
import { ScheduleDeliveriesCommand } from '../schedule-deliveries/schedule-deliveries.command';
import { ScheduleDeliveriesHandler } from '../schedule-deliveries/schedule-deliveries.handler';
import { UpdateEndpointCommand } from '../update-endpoint/update-endpoint.command';
import { UpdateEndpointHandler } from '../update-endpoint/update-endpoint.handler';
import { answer, webhooksWorld } from '../webhook-spec-fixtures';
import { RedeliverDeliveryCommand } from './redeliver-delivery.command';
import { RedeliverDeliveryHandler } from './redeliver-delivery.handler';

describe('RedeliverDeliveryHandler (a new series with the same webhook-id)', () => {
  const setup = async () => {
    const w = webhooksWorld();
    const ep = await w.createEndpoint('org_a');
    const sut = new RedeliverDeliveryHandler(w.deliveries, w.deliveryRows, w.endpointRows, w.queue);
    const events = [w.commerceEvent('org_a'), w.commerceEvent('org_a'), w.commerceEvent('org_a')];
    await new ScheduleDeliveriesHandler(w.endpointRows, w.deliveries, w.deliveryRows, w.queue).execute(new ScheduleDeliveriesCommand(events));
    const due = w.queue.enqueued.splice(0);
    return { ...w, ep, sut, due };
  };

  it('starts series 2 of a finished delivery and enqueues it; the new series is attempted', async () => {
    const { sut, due, deliver, deliveryRows, queue, store, replies } = await setup();
    replies.push(answer(400));
    await deliver.execute(new DeliverWebhookCommand(due[0].id, 1));
    const r = await sut.execute(new RedeliverDeliveryCommand('org_a', due[0].id, 'api_key:k'));
    expect(r).toEqual({ id: due[0].id, webhook_id: (await deliveryRows.byId(due[0].id))!.event_id, status: 'pending', series: 2 });
    expect(queue.enqueued).toEqual([expect.objectContaining({ id: due[0].id, series: 2 })]);
    expect((await store.readStream(deliveryStream(due[0].id))).at(-1)).toMatchObject({ type: WebhookEvents.redeliveryRequested, data: { series: 2, requested_by: 'api_key:k' } });
    expect(await deliver.execute(new DeliverWebhookCommand(due[0].id, 1))).toEqual({ next: 'none' }); // the old series' job
    await deliver.execute(new DeliverWebhookCommand(due[0].id, 2));
    expect(await deliveryRows.byId(due[0].id)).toMatchObject({ status: 'delivered', series: 2, series_attempts: 1, attempts: 2 });
  });

  it('refuses a pending delivery, a missing one, and one whose endpoint is disabled', async () => {
    const { sut, due, deliver, endpoints, endpointRows, targets, ep } = await setup();
    await expect(sut.execute(new RedeliverDeliveryCommand('org_a', due[0].id, 'k'))).rejects.toMatchObject({ code: 'webhook_delivery_pending' });
    await expect(sut.execute(new RedeliverDeliveryCommand('org_b', due[0].id, 'k'))).rejects.toMatchObject({ code: 'not_found' });
    await deliver.execute(new DeliverWebhookCommand(due[0].id, 1));
    await new UpdateEndpointHandler(endpoints, endpointRows, targets).execute(new UpdateEndpointCommand('org_a', ep.id, { enabled: false }));
    await expect(sut.execute(new RedeliverDeliveryCommand('org_a', due[0].id, 'k'))).rejects.toMatchObject({ code: 'webhook_endpoint_disabled' });
  });
});
