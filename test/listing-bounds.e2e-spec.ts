import { randomBytes } from 'node:crypto';
import { AccessService, SCOPES } from '@app/access';
import { ProjectionHost } from '@app/event-store';
import { invitedPerson } from './support/console-client';
import { startTestApp, TestApp } from './support/test-app';

/**
 * The listings' cursors and time bounds are input like any other: what Date.parse accepts but
 * PostgreSQL refuses (year 0000, 2026-02-30, "March 7"), or an id holding U+0000, is a 400, never
 * a 500 from the query. A cursor the service issued still pages, and valid bounds still filter.
 */
describe('listing cursors and time bounds (e2e)', () => {
  let t: TestApp;
  let key: string;
  beforeAll(async () => {
    t = await startTestApp({ TRUST_PROXY: 'true' });
    const access = t.app.get(AccessService);
    const org = await access.createOrganization(`bounds-${randomBytes(3).toString('hex')}`);
    key = (await access.createApiKey(org.org_id, { scopes: [...SCOPES], mode: 'test' })).key;
  });
  afterAll(() => t?.close());

  const get = (url: string) =>
    t.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${key}`, 'x-forwarded-for': `10.9.${randomBytes(1)[0]}.${randomBytes(1)[0]}` } });
  const cursor = (at: string, id: string) => Buffer.from(JSON.stringify([at, id])).toString('base64url');
  const FORGED = [cursor('0', 'x'), cursor('March 7', 'x'), cursor('2026-02-30T00:00:00.000Z', 'x'), cursor('0000-01-01T00:00:00.000Z', 'x'), cursor('2026-01-01T00:00:00.000Z', 'a\u0000b')];
  const LISTINGS = ['/api/cdp/transactions', '/api/cdp/approvals', '/api/cdp/webhooks/deliveries', '/v1/registry', '/v1/registry?visibility=private'];

  it('answers a forged cursor 400 validation_failed (field cursor) on every listing', async () => {
    for (const listing of LISTINGS) {
      for (const c of FORGED) {
        const res = await get(`${listing}${listing.includes('?') ? '&' : '?'}cursor=${c}`);
        expect([listing, c, res.statusCode, res.json().error, res.json().details]).toEqual([listing, c, 400, 'validation_failed', [{ field: 'cursor', message: 'invalid cursor' }]]);
      }
    }
  });

  it('answers an impossible from/to 400 naming the field; a date, a date-time with a zone, and a cursor it issued still work', async () => {
    for (const [field, value] of [
      ['from', '2026-02-30'],
      ['to', '2026-13-01T00:00:00Z'],
      ['from', '0000-01-01'],
      ['to', '2025-02-29T10:00:00Z'],
    ]) {
      const res = await get(`/api/cdp/transactions?${field}=${encodeURIComponent(value)}`);
      expect([value, res.statusCode, res.json().error, res.json().details?.[0]?.field]).toEqual([value, 400, 'validation_failed', field]);
    }
    for (const query of ['from=2024-02-29', 'to=2030-01-01T10:00:00%2B02:00', 'from=2020-01-01T00:00:00.000Z&to=2100-12-31']) {
      expect([query, (await get(`/api/cdp/transactions?${query}`)).statusCode]).toEqual([query, 200]);
    }
    // Two entries of the registry: its first page of one hands back a cursor that pages.
    for (const title of ['one', 'two']) {
      const res = await t.app.inject({ method: 'POST', url: '/v1/registry', headers: { authorization: `Bearer ${key}` }, payload: { title, artifact_type: 'dataset' } });
      expect(res.statusCode).toBe(201);
    }
    await t.app.get(ProjectionHost).catchUp(); // the registry is a projection the workers apply
    const first = (await get('/v1/registry?visibility=private&limit=1')).json();
    expect(first.next_cursor).toEqual(expect.any(String));
    const second = await get(`/v1/registry?visibility=private&limit=1&cursor=${first.next_cursor}`);
    expect(second.statusCode).toBe(200);
    expect(second.json().items).toHaveLength(1);
    expect(second.json().items[0].id).not.toBe(first.items[0].id);
  });

  it('the console answers a forged cursor or an impossible date with the 400 page, not a 500', async () => {
    const { b } = await invitedPerson(t.app, t.app.get(AccessService), 'admin');
    for (const url of [
      '/console/transactions?from=2026-02-30',
      '/console/transactions?to=0000-01-01',
      `/console/transactions?cursor=${cursor('0', 'x')}`,
      `/console/approvals?cursor=${cursor('2026-02-30T00:00:00.000Z', 'x')}`,
    ]) {
      expect([url, (await b.send('GET', url)).status]).toEqual([url, 400]);
    }
    expect((await b.send('GET', '/console/transactions?from=2024-02-29&to=2100-01-01')).status).toBe(200);
  });
});
