import { MAX_ENDPOINTS_PER_ORG } from '../domain/endpoint.aggregate';
import { endpointStream, WebhookEvents } from '../domain/event-types';
import { webhooksWorld } from '../webhook-spec-fixtures';

describe('CreateEndpointHandler (the aggregate decides, saved on the in-memory store)', () => {
  it('records the creation, seals a secret (never in the event) and answers the endpoint with it, once', async () => {
    const { createEndpoint, store, secrets, sendTargets } = webhooksWorld();
    const ep = await createEndpoint('org_a', { event_types: ['execution.succeeded'], description: 'books' });
    expect(ep).toMatchObject({ id: expect.stringMatching(/^ep_/), url: 'https://93.184.215.14/hook', event_types: ['execution.succeeded'], description: 'books', enabled: true, disabled_reason: null, created_at: '2026-11-25T10:00:00.000Z' });
    expect(ep.secret).toMatch(/^whsec_/);
    const [event] = await store.readStream(endpointStream(ep.id));
    expect(event).toMatchObject({ type: WebhookEvents.endpointCreated, data: { endpoint_id: ep.id, organization_id: 'org_a', secret_id: secrets.secrets[0].secretId } });
    expect(JSON.stringify(event.data)).not.toContain(ep.secret);
    expect(await sendTargets.load(ep.id)).toMatchObject({ enabled: true, deleted: false, secrets: [{ secret: ep.secret, expiresAt: null }] });
  });

  it('refuses a private target before recording anything', async () => {
    const { createEndpoint, store } = webhooksWorld();
    await expect(createEndpoint('org_a', { url: 'http://10.0.0.7/hook' })).rejects.toMatchObject({ code: 'webhook_target_not_allowed' });
    await expect(createEndpoint('org_a', { url: 'ftp://example.com/x' })).rejects.toMatchObject({ code: 'validation_failed' });
    expect((await store.readAll()).events).toHaveLength(0);
  });

  it(`holds the organization's limit (${MAX_ENDPOINTS_PER_ORG}) under concurrency, keeps no secret of a refused one, and a deletion frees a place`, async () => {
    const w = webhooksWorld();
    const results = await Promise.allSettled(Array.from({ length: MAX_ENDPOINTS_PER_ORG + 3 }, () => w.createEndpoint('org_a')));
    const refused = results.filter((r) => r.status === 'rejected');
    expect(refused).toHaveLength(3);
    expect((refused[0] as PromiseRejectedResult).reason).toMatchObject({ code: 'webhook_endpoint_limit', message: `An organization may have at most ${MAX_ENDPOINTS_PER_ORG} webhook endpoints` });
    expect(w.secrets.secrets).toHaveLength(MAX_ENDPOINTS_PER_ORG);
    await expect(w.createEndpoint('org_b')).resolves.toMatchObject({ enabled: true });
    const first = (results[0] as PromiseFulfilledResult<{ id: string }>).value;
    const state = (await w.endpoints.load(first.id))!;
    await w.endpoints.save(state, [{ type: WebhookEvents.endpointDeleted, data: { endpoint_id: first.id, organization_id: 'org_a' } }]);
    await expect(w.createEndpoint('org_a')).resolves.toMatchObject({ enabled: true });
  });
});
