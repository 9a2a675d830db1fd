import { DeliverWebhookCommand } from '../deliver-webhook/deliver-webhook.command';
import { GetDeliveryHandler, GetDeliveryQuery, ListDeliveriesHandler, ListDeliveriesQuery } from '../query-deliveries/delivery.queries';
import { UpdateEndpointCommand } from '../update-endpoint/update-endpoint.command';
import { UpdateEndpointHandler } from '../update-endpoint/update-endpoint.handler';
import { webhooksWorld } from '../webhook-spec-fixtures';
import { TestEndpointCommand } from './test-endpoint.command';
import { TestEndpointHandler } from './test-endpoint.handler';

describe('TestEndpointHandler (and the delivery queries)', () => {
  it('schedules a webhook.test ping through the normal delivery path, visible in the history', async () => {
    const w = webhooksWorld();
    const ep = await w.createEndpoint('org_a');
    const sut = new TestEndpointHandler(w.endpoints, w.deliveries, w.queue, w.clock);
    const r = await sut.execute(new TestEndpointCommand('org_a', ep.id, 'api_key:key_1'));
    expect(r).toEqual({ delivery_id: expect.stringMatching(/^dlv_/), webhook_id: expect.any(String), status: 'pending' });
    expect(w.queue.enqueued).toEqual([{ id: r.delivery_id, series: 1, at: w.clock.now() }]);
    await w.deliver.execute(new DeliverWebhookCommand(r.delivery_id, 1));
    expect(JSON.parse(w.sent[0].body)).toMatchObject({ id: r.webhook_id, event_type: 'webhook.test', actor: { type: 'api_key', id: 'key_1' }, metadata: { endpoint_id: ep.id } });
    const detail = await new GetDeliveryHandler(w.deliveryRows).execute(new GetDeliveryQuery('org_a', r.delivery_id));
    expect(detail).toMatchObject({ id: r.delivery_id, webhook_id: r.webhook_id, status: 'delivered', attempts: 1, payload: { event_type: 'webhook.test' }, attempt_history: [{ attempt: 1, outcome: 'delivered' }] });
    await expect(new GetDeliveryHandler(w.deliveryRows).execute(new GetDeliveryQuery('org_b', r.delivery_id))).rejects.toMatchObject({ code: 'not_found' });
    const page = await new ListDeliveriesHandler(w.deliveryRows).execute(new ListDeliveriesQuery('org_a', { limit: 10 }));
    expect(page).toMatchObject({ items: [{ id: r.delivery_id, event_type: 'webhook.test' }], next_cursor: null });
  });

  it('refuses a disabled endpoint and another organization’s', async () => {
    const w = webhooksWorld();
    const ep = await w.createEndpoint('org_a');
    const sut = new TestEndpointHandler(w.endpoints, w.deliveries, w.queue, w.clock);
    await expect(sut.execute(new TestEndpointCommand('org_b', ep.id, 'k'))).rejects.toMatchObject({ code: 'not_found' });
    await new UpdateEndpointHandler(w.endpoints, w.endpointRows, w.targets).execute(new UpdateEndpointCommand('org_a', ep.id, { enabled: false }));
    await expect(sut.execute(new TestEndpointCommand('org_a', ep.id, 'k'))).rejects.toMatchObject({ code: 'webhook_endpoint_disabled' });
    expect(w.queue.enqueued).toEqual([]);
  });
});
