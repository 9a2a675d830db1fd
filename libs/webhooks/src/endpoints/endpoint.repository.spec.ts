import { OpenedEventStore, openEventStore } from '@app/event-store';
import { createEndpoint, deleteEndpoint, MAX_ENDPOINTS_PER_ORG, updateEndpoint } from '../domain/endpoint.aggregate';
import { newEndpointId } from '../domain/ids';
import { webhookMigrations } from '../webhooks.migrations';
import { EndpointRepository } from './endpoint.repository';
import { SqlEndpointRows } from './endpoint-rows.repository';

/** The endpoints projection on the embedded database (the same SQL as PostgreSQL): the limit's CHECK constraint, and a rebuild. */
describe('EndpointRepository with the endpoints projection (embedded SQL)', () => {
  let opened: OpenedEventStore;
  let endpoints: EndpointRepository;
  let rows: SqlEndpointRows;

  beforeAll(async () => {
    opened = await openEventStore({ migrations: webhookMigrations });
    endpoints = new EndpointRepository(opened.store);
    rows = new SqlEndpointRows(opened.db);
  });
  afterAll(async () => {
    await opened?.store.close();
    await opened?.db.close();
  });

  const create = async (orgId: string) => {
    const id = newEndpointId();
    await endpoints.saveNew(id, createEndpoint({ id, orgId, url: 'https://example.com/hook', secretId: 'sec_1' }));
    return id;
  };

  it(`refuses an organization's endpoint past ${MAX_ENDPOINTS_PER_ORG} by the count's constraint, also under concurrency; a deletion frees a place`, async () => {
    const results = await Promise.allSettled(Array.from({ length: MAX_ENDPOINTS_PER_ORG + 2 }, () => create('org_limit')));
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(refused).toHaveLength(2);
    expect(refused[0].reason).toMatchObject({ code: 'webhook_endpoint_limit', message: `An organization may have at most ${MAX_ENDPOINTS_PER_ORG} webhook endpoints` });
    expect(await rows.list('org_limit')).toHaveLength(MAX_ENDPOINTS_PER_ORG);
    const first = (results.find((r) => r.status === 'fulfilled') as PromiseFulfilledResult<string>).value;
    await endpoints.save((await endpoints.load(first))!, deleteEndpoint((await endpoints.load(first))!));
    await expect(create('org_limit')).resolves.toMatch(/^ep_/);
    await expect(create('org_limit')).rejects.toMatchObject({ code: 'webhook_endpoint_limit' });
  });

  it('rebuilds the endpoints and their counts from the stored events to the same rows', async () => {
    const id = await create('org_rebuild');
    const state = (await endpoints.load(id))!;
    await endpoints.save(state, updateEndpoint(state, { enabled: false, description: 'paused', event_types: ['receipt.issued'] }));
    const snapshot = async () => ({
      endpoints: await opened.db.query('SELECT * FROM webhook_endpoints ORDER BY id'),
      counts: await opened.db.query('SELECT * FROM webhook_endpoint_counts ORDER BY org_id'),
    });
    const before = await snapshot();
    expect(await rows.byId(id)).toMatchObject({ enabled: false, disabled_reason: 'manual', description: 'paused', event_types: ['receipt.issued'] });
    await opened.store.rebuildProjection('webhook_endpoints');
    expect(await snapshot()).toEqual(before);
  });
});
