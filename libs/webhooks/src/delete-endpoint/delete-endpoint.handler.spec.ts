import { GetEndpointHandler, GetEndpointQuery, ListEndpointsHandler, ListEndpointsQuery } from '../query-endpoints/endpoint.queries';
import { webhooksWorld } from '../webhook-spec-fixtures';
import { DeleteEndpointCommand } from './delete-endpoint.command';
import { DeleteEndpointHandler } from './delete-endpoint.handler';

describe('DeleteEndpointHandler (and the endpoint queries)', () => {
  it('deletes the endpoint: it is gone from the list, answers not found, and its cache entry is dropped', async () => {
    const w = webhooksWorld();
    const sut = new DeleteEndpointHandler(w.endpoints);
    const [a, b] = [await w.createEndpoint('org_a'), await w.createEndpoint('org_a')];
    expect((await w.cache.get(a.id))!.deleted).toBe(false);
    await sut.execute(new DeleteEndpointCommand('org_a', a.id));
    expect((await w.cache.get(a.id))!.deleted).toBe(true);
    expect((await new ListEndpointsHandler(w.endpointRows).execute(new ListEndpointsQuery('org_a'))).items.map((e) => e.id)).toEqual([b.id]);
    await expect(new GetEndpointHandler(w.endpointRows).execute(new GetEndpointQuery('org_a', a.id))).rejects.toMatchObject({ code: 'not_found' });
    await expect(sut.execute(new DeleteEndpointCommand('org_a', a.id))).rejects.toMatchObject({ code: 'not_found' });
    await expect(sut.execute(new DeleteEndpointCommand('org_b', b.id))).rejects.toMatchObject({ code: 'not_found' });
    expect(await new GetEndpointHandler(w.endpointRows).execute(new GetEndpointQuery('org_a', b.id))).toMatchObject({ id: b.id, enabled: true });
  });
});
