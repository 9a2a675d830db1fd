import { randomBytes } from 'node:crypto';
import { AccessService } from '@app/access';
import { ProjectionHost } from '@app/event-store';
import { startTestApp, TestApp } from './support/test-app';

/** The registry: a projection of certificate streams, with filters, search, cursors and owner edits. */
describe('registry (e2e)', () => {
  let t: TestApp;
  let access: AccessService;
  const marker = `m${randomBytes(4).toString('hex')}`; // a word only this run's entries carry
  beforeAll(async () => {
    t = await startTestApp({ TRUST_PROXY: 'true' });
    access = t.app.get(AccessService);
  });
  afterAll(() => t?.close());

  const ip = () => `10.${randomBytes(1)[0]}.${randomBytes(1)[0]}.${randomBytes(1)[0]}`;
  const keyFor = async () => {
    const org = await access.createOrganization(`registry-${randomBytes(3).toString('hex')}`);
    return (await access.createApiKey(org.org_id, { scopes: ['certificates:write'], mode: 'test' })).key;
  };
  const call = (method: 'GET' | 'POST' | 'PATCH', url: string, key?: string, payload?: object) =>
    t.app.inject({ method, url, payload, headers: { 'x-forwarded-for': ip(), ...(key ? { authorization: `Bearer ${key}` } : {}) } });
  const caughtUp = () => t.app.get(ProjectionHost).catchUp();

  it('issuance with visibility "public" lists the certificate in the public registry in the same call; a bad visibility is 400', async () => {
    const key = await keyFor();
    const own = `p${randomBytes(4).toString('hex')}`; // not the shared marker: other tests expect it unpublished
    const title = `Published ${own} rainfall`;
    const issued = await call('POST', '/api/notary/create', key, { content: 'a,b\n1,2\n', filename: title, artifact_type: 'dataset', visibility: 'public' });
    expect(issued.statusCode).toBe(200);
    const id = issued.json().certificate_id;
    await caughtUp();
    const listed = (await call('GET', `/v1/registry?q=published%20${own}`)).json();
    expect(listed.items).toEqual([expect.objectContaining({ id, title, visibility: 'public', status: 'certified', artifactType: 'dataset' })]);
    // The signed certificate is the same as without it: visibility is the listing's, not the payload's.
    expect((await call('GET', `/api/certificates/${id}`)).json()).not.toHaveProperty('visibility');

    const bad = await call('POST', '/api/notary/create', key, { content: 'x', visibility: 'everyone' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ error: 'validation_failed', details: [expect.objectContaining({ field: 'visibility' })] });
  });

  it('lists a certificate privately until its owner publishes it, then finds it by filter and full-text search', async () => {
    const key = await keyFor();
    const issued = (await call('POST', '/api/notary/create', key, { content: '[{"a":1},{"a":2}]', filename: 'rainfall.json', artifact_type: 'dataset' })).json();
    await caughtUp();
    const publicBefore = (await call('GET', `/v1/registry?q=${marker}`)).json();
    expect(publicBefore.items).toEqual([]);
    const mine = (await call('GET', '/v1/registry?visibility=private', key)).json();
    expect(mine.items).toEqual([
      expect.objectContaining({ id: issued.certificate_id, title: 'rainfall.json', status: 'certified', artifactType: 'dataset', rowsCount: 2, visibility: 'private' }),
    ]);

    const edited = await call('PATCH', `/v1/registry/${issued.certificate_id}`, key, {
      title: `Rainfall ${marker}`,
      summary: 'Daily rainfall by station',
      industry: 'climate',
      tags: ['weather', 'open-data'],
      visibility: 'public',
    });
    expect(edited.statusCode).toBe(200);
    await caughtUp();
    const found = (await call('GET', `/v1/registry?q=${marker}%20station&industry=climate&artifact_type=dataset&status=certified`)).json();
    expect(found.total).toBe(1);
    expect(found.items[0]).toMatchObject({
      id: issued.certificate_id,
      slug: `rainfall-json-${issued.certificate_id.slice(0, 8)}`, // stable: set when listed, not changed by edits
      summary: 'Daily rainfall by station',
      tags: ['weather', 'open-data'],
      certificateId: issued.certificate_id,
      artifactHash: issued.dataset_hash,
      verificationUrl: `${t.config.BASE_URL}/verify/${issued.certificate_id}`,
    });
    expect((await call('GET', `/v1/registry?q=${marker}&industry=finance`)).json().total).toBe(0);
    expect((await call('GET', `/v1/registry?q=open-data%20${marker}`)).json().total).toBe(1);
  });

  it('lists unverified entries without a certificate, and pages with a stable cursor', async () => {
    const key = await keyFor();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await call('POST', '/v1/registry', key, { title: `Model ${i} ${marker}pages`, artifact_type: 'model', visibility: 'public', tags: [`${marker}pages`] });
      expect(res.statusCode).toBe(201);
      ids.push(res.json().id);
    }
    await caughtUp();
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const url: string = `/v1/registry?q=${marker}pages&limit=2${cursor ? `&cursor=${cursor}` : ''}`;
      const page = (await call('GET', url)).json();
      expect(page.total).toBe(5);
      expect(page.items.length).toBeLessThanOrEqual(2);
      for (const item of page.items) expect(item).toMatchObject({ status: 'unverified', certificateId: null, artifactHash: null, verificationUrl: null });
      seen.push(...page.items.map((i: { id: string }) => i.id));
      cursor = page.next_cursor;
    } while (cursor);
    expect(seen.sort()).toEqual([...ids].sort());
    expect((await call('GET', `/v1/registry?q=${marker}pages&status=certified`)).json().total).toBe(0);
  });

  it("refuses bad queries, anonymous private listing, and edits of another organization's entry (404)", async () => {
    for (const q of ['limit=201', 'limit=0', 'limit=abc', 'status=pending', 'artifact_type=car', 'visibility=secret', 'cursor=garbage', 'unknown=1']) {
      const res = await call('GET', `/v1/registry?${q}`);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ ok: false, error: 'validation_failed' });
    }
    expect((await call('GET', '/v1/registry')).json()).toMatchObject({ items: expect.any(Array), total: expect.any(Number) });
    expect((await call('GET', '/v1/registry?limit=200')).statusCode).toBe(200);
    expect((await call('GET', '/v1/registry?visibility=private')).statusCode).toBe(401);

    const owner = await keyFor();
    const other = await keyFor();
    const { id } = (await call('POST', '/v1/registry', owner, { title: 'Mine', artifact_type: 'system' })).json();
    expect((await call('PATCH', `/v1/registry/${id}`, other, { visibility: 'public' })).statusCode).toBe(404);
    expect((await call('PATCH', '/v1/registry/00000000-0000-4000-8000-000000000000', owner, { visibility: 'public' })).statusCode).toBe(404);
    expect((await call('PATCH', `/v1/registry/${id}`, owner, {})).statusCode).toBe(400);
    expect((await call('PATCH', `/v1/registry/${id}`, owner, { visibility: 'everyone' })).statusCode).toBe(400);
    expect((await call('PATCH', `/v1/registry/${id}`, owner, { tags: 'not-a-list' })).statusCode).toBe(400);
    expect((await call('PATCH', 'v1/registry/not-a-uuid', owner, { title: 'x' })).statusCode).toBe(400);
    expect((await call('POST', '/v1/registry', owner, { title: '', artifact_type: 'model' })).statusCode).toBe(400);
    expect((await call('POST', '/v1/registry', undefined, { title: 'x', artifact_type: 'model' })).statusCode).toBe(401);
  });
});
