import { DeliverWebhookCommand } from '../deliver-webhook/deliver-webhook.command';
import { RedeliverDeliveryHandler } from '../redeliver-delivery/redeliver-delivery.handler';
import { ScheduleDeliveriesCommand } from '../schedule-deliveries/schedule-deliveries.command';
import { ScheduleDeliveriesHandler } from '../schedule-deliveries/schedule-deliveries.handler';
import { answer, webhooksWorld } from '../webhook-spec-fixtures';
import { RecoverDeliveriesCommand } from './recover-deliveries.command';
import { RecoverDeliveriesHandler } from './recover-deliveries.handler';

describe('RecoverDeliveriesHandler (each failed delivery since a time gets a new series)', () => {
  const setup = async () => {
    const w = webhooksWorld();
    const ep = await w.createEndpoint('org_a');
    const recover = new RecoverDeliveriesHandler(w.endpoints, w.deliveryRows, new RedeliverDeliveryHandler(w.deliveries, w.deliveryRows, w.endpointRows, w.queue), w.queue);
    const events = [w.commerceEvent('org_a'), w.commerceEvent('org_a'), w.commerceEvent('org_a')];
    await new ScheduleDeliveriesHandler(w.endpointRows, w.deliveries, w.deliveryRows, w.queue).execute(new ScheduleDeliveriesCommand(events));
    const due = w.queue.enqueued.splice(0);
    return { ...w, ep, recover, due };
  };

  it('recovers the failed deliveries of an endpoint since a time, and only those', async () => {
    const { recover, due, deliver, replies, queue, ep, clock } = await setup();
    replies.push(answer(400), answer(422));
    await deliver.execute(new DeliverWebhookCommand(due[0].id, 1));
    await deliver.execute(new DeliverWebhookCommand(due[1].id, 1));
    const r = await recover.execute(new RecoverDeliveriesCommand('org_a', ep.id, new Date(clock.now().getTime() - 60_000), 'api_key:k'));
    expect(r).toEqual({ endpoint_id: ep.id, since: new Date(clock.now().getTime() - 60_000).toISOString(), recovered: 2 });
    expect(queue.enqueued.map((d) => [d.id, d.series]).sort()).toEqual([[due[0].id, 2], [due[1].id, 2]].sort());
    expect((await recover.execute(new RecoverDeliveriesCommand('org_a', ep.id, new Date(0), 'k'))).recovered).toBe(0);
    await expect(recover.execute(new RecoverDeliveriesCommand('org_b', ep.id, new Date(0), 'k'))).rejects.toMatchObject({ code: 'not_found' });
  });
});
