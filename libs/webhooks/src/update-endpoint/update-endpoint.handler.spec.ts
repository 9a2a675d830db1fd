import { endpointStream, WebhookEvents } from '../domain/event-types';
import { webhooksWorld } from '../webhook-spec-fixtures';
import { UpdateEndpointCommand } from './update-endpoint.command';
import { UpdateEndpointHandler } from './update-endpoint.handler';

describe('UpdateEndpointHandler', () => {
  const setup = () => {
    const w = webhooksWorld();
    return { ...w, sut: new UpdateEndpointHandler(w.endpoints, w.endpointRows, w.targets) };
  };

  it('records the change at the revision loaded and answers the endpoint as the read model has it', async () => {
    const { sut, createEndpoint, store, clock } = setup();
    const ep = await createEndpoint('org_a');
    clock.advance(1000);
    const view = await sut.execute(new UpdateEndpointCommand('org_a', ep.id, { event_types: ['receipt.issued'], enabled: false }));
    expect(view).toMatchObject({ event_types: ['receipt.issued'], enabled: false, disabled_reason: 'manual', disabled_at: '2026-11-25T10:00:01.000Z', updated_at: '2026-11-25T10:00:01.000Z' });
    expect((await store.readStream(endpointStream(ep.id))).map((e) => e.type)).toEqual([WebhookEvents.endpointCreated, WebhookEvents.endpointUpdated]);
    expect(await sut.execute(new UpdateEndpointCommand('org_a', ep.id, { enabled: true }))).toMatchObject({ enabled: true, disabled_reason: null, disabled_at: null });
  });

  it('re-enabling an endpoint ends its failure streak', async () => {
    const { sut, createEndpoint, store, endpointRows } = setup();
    const ep = await createEndpoint('org_a');
    await store.append('webhook-delivery-dlv_x', [
      { type: WebhookEvents.deliveryAttempted, data: { delivery_id: 'dlv_x', endpoint_id: ep.id, organization_id: 'org_a', attempt: 1, series: 1, outcome: 'retry', current: true, status_code: 500, latency_ms: 1, error: null, response_body: null, next_attempt_at: null } },
    ]);
    expect(await endpointRows.failingSince(ep.id)).toEqual(new Date('2026-11-25T10:00:00.000Z'));
    await sut.execute(new UpdateEndpointCommand('org_a', ep.id, { description: 'still failing' }));
    expect(await endpointRows.failingSince(ep.id)).not.toBeNull();
    await sut.execute(new UpdateEndpointCommand('org_a', ep.id, { enabled: true }));
    expect(await endpointRows.failingSince(ep.id)).toBeNull();
  });

  it("refuses another organization's endpoint and a private target, recording nothing", async () => {
    const { sut, createEndpoint, store } = setup();
    const ep = await createEndpoint('org_a');
    await expect(sut.execute(new UpdateEndpointCommand('org_b', ep.id, { enabled: false }))).rejects.toMatchObject({ code: 'not_found' });
    await expect(sut.execute(new UpdateEndpointCommand('org_a', ep.id, { url: 'http://192.168.1.1/x' }))).rejects.toMatchObject({ code: 'webhook_target_not_allowed' });
    expect(await store.readStream(endpointStream(ep.id))).toHaveLength(1);
  });

  it('decides concurrent changes one after the other (a lost race is decided again on the new state)', async () => {
    const { sut, createEndpoint, store } = setup();
    const ep = await createEndpoint('org_a');
    await Promise.all([sut.execute(new UpdateEndpointCommand('org_a', ep.id, { description: 'a' })), sut.execute(new UpdateEndpointCommand('org_a', ep.id, { description: 'b' }))]);
    expect(await store.readStream(endpointStream(ep.id))).toHaveLength(3);
  });
});
