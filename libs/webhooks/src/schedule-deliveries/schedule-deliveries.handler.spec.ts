import { deliveryIdFor } from '../domain/ids';
import { UpdateEndpointCommand } from '../update-endpoint/update-endpoint.command';
import { UpdateEndpointHandler } from '../update-endpoint/update-endpoint.handler';
import { webhooksWorld } from '../webhook-spec-fixtures';
import { ScheduleDeliveriesCommand } from './schedule-deliveries.command';
import { ScheduleDeliveriesHandler } from './schedule-deliveries.handler';

describe('ScheduleDeliveriesHandler (the fan-out of commerce events)', () => {
  it('schedules one delivery per enabled endpoint of the organization that subscribes and existed, in one appendMany, and enqueues them', async () => {
    const w = webhooksWorld();
    const before = w.commerceEvent('org_a', 'authorization.requested', '2026-11-25T09:00:00.000Z');
    const all = await w.createEndpoint('org_a');
    const receipts = await w.createEndpoint('org_a', { event_types: ['receipt.issued'] });
    const disabled = await w.createEndpoint('org_a');
    await new UpdateEndpointHandler(w.endpoints, w.endpointRows, w.targets).execute(new UpdateEndpointCommand('org_a', disabled.id, { enabled: false }));
    const other = await w.createEndpoint('org_b');
    const appendMany = jest.spyOn(w.store, 'appendMany');
    const events = [w.commerceEvent('org_a'), w.commerceEvent('org_a', 'receipt.issued'), w.commerceEvent('org_b'), before];
    const sut = new ScheduleDeliveriesHandler(w.endpointRows, w.deliveries, w.deliveryRows, w.queue);
    expect(await sut.execute(new ScheduleDeliveriesCommand(events))).toBe(4);
    expect(appendMany).toHaveBeenCalledTimes(1);
    const expected = [deliveryIdFor(events[0].event_id, all.id), deliveryIdFor(events[1].event_id, all.id), deliveryIdFor(events[1].event_id, receipts.id), deliveryIdFor(events[2].event_id, other.id)];
    expect(w.queue.enqueued.map((d) => d.id)).toEqual(expected);
    expect(w.queue.enqueued.every((d) => d.series === 1)).toBe(true);
    expect(await w.deliveryRows.byId(expected[2])).toMatchObject({ status: 'pending', endpoint_id: receipts.id, event_type: 'receipt.issued', series: 1, attempts: 0, transaction_id: 'txn_1' });
  });

  it('schedules the same events again as a replay (nothing new), enqueueing what is still pending', async () => {
    const w = webhooksWorld();
    await w.createEndpoint('org_a');
    const sut = new ScheduleDeliveriesHandler(w.endpointRows, w.deliveries, w.deliveryRows, w.queue);
    const events = [w.commerceEvent('org_a'), w.commerceEvent('org_a')];
    await sut.execute(new ScheduleDeliveriesCommand(events));
    const stored = (await w.store.readAll()).events.length;
    await sut.execute(new ScheduleDeliveriesCommand(events));
    expect((await w.store.readAll()).events).toHaveLength(stored);
    expect(w.queue.enqueued).toHaveLength(4);
    expect(new Set(w.queue.enqueued.map((d) => d.id)).size).toBe(2);
  });

  it('does nothing for events of organizations without endpoints', async () => {
    const w = webhooksWorld();
    expect(await new ScheduleDeliveriesHandler(w.endpointRows, w.deliveries, w.deliveryRows, w.queue).execute(new ScheduleDeliveriesCommand([w.commerceEvent('org_z')]))).toBe(0);
    expect(w.queue.enqueued).toEqual([]);
  });
});
