import { AccessService } from '@app/access';
import { ConsoleClient, invitedPerson, multipart } from './support/console-client';
import { startTestApp, TestApp } from './support/test-app';
import { eventually } from './support/webhook-receiver';

/**
 * The console's policies and certificates pages over HTTP (embedded, and PostgreSQL/Redis in the
 * second pass): a policy saved from the JSON editor (refusals shown per field, from the API's
 * 400 details), its versions and their diff, a simulation; certificates issued from a file
 * (multipart) or pasted text within the API's limits, listed, published and linked to the verify
 * page. Forms without their CSRF token are 403, a role without the scope 403, and another
 * organization's ids the 404 page.
 */
describe('console policies and certificates pages (e2e)', () => {
  let t: TestApp;
  let access: AccessService;

  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMITS: 'off' });
    access = t.app.get(AccessService);
  }, 60_000);
  afterAll(async () => {
    await t?.close();
  });

  const person = (role: 'admin' | 'viewer', orgId?: string) => invitedPerson(t.app, access, role, orgId);

  describe('policies', () => {
    it('saves from the editor; a mistake is the editor again with the field\u2019s message; versions diff; simulate', async () => {
      const { b } = await person('admin');
      expect(await b.send('GET', '/console/policies')).toMatchObject({ status: 303, headers: { location: '/console/policies/default' } });
      const empty = await b.send('GET', '/console/policies/default');
      expect(empty.status).toBe(200);
      expect(empty.body).toContain('no version yet');
      const csrf = b.csrf(empty.body);

      const v1 = JSON.stringify({ limits: { USD: { per_transaction_cents: 50_000, review_above_cents: 20_000 } } });
      expect((await b.send('POST', '/console/policies/default', { policy: v1 })).status).toBe(403);

      // Not JSON: where it stops being JSON.
      const notJson = await b.send('POST', '/console/policies/default', { csrf, policy: '{\n  "limits": {,\n}' });
      expect(notJson.status).toBe(400);
      expect(notJson.body).toMatch(/is not valid JSON at line 2, column \d+/);
      // A field's mistake: the message names its path, beside the textarea, which keeps what was typed (escaped).
      const typed = JSON.stringify({ limits: { USD: { per_transaction_cents: -5, review_above_cents: 20_000 } }, merchants: { blocked: '<m>' } }, null, 2);
      const wrong = await b.send('POST', '/console/policies/default', { csrf, policy: typed });
      expect(wrong.status).toBe(400);
      expect(wrong.body).toMatch(/<li data-field="limits\.USD\.per_transaction_cents"><code>limits\.USD\.per_transaction_cents<\/code> [^<]+<\/li>/);
      expect(wrong.body).toMatch(/<li data-field="merchants\.blocked"><code>merchants\.blocked<\/code> must be an array of merchant ids<\/li>/);
      expect(wrong.body).toContain('aria-describedby="err-policy-json"');
      expect(wrong.body).toContain('&#34;&#60;m&#62;&#34;');
      expect(wrong.body).not.toContain('"<m>"');

      expect(await b.send('POST', '/console/policies/default', { csrf, policy: v1 })).toMatchObject({ status: 303, headers: { location: '/console/policies/default?done=saved' } });
      const saved = await b.send('GET', '/console/policies/default?done=saved');
      expect(saved.body).toMatch(/id="current-version">1</);
      expect(saved.body).toContain('A new version is recorded');
      // The same document again (spelt otherwise): nothing recorded.
      expect(await b.send('POST', '/console/policies/default', { csrf, policy: JSON.stringify({ limits: { USD: { review_above_cents: 20_000, per_transaction_cents: 50_000 } } }) })).toMatchObject({
        status: 303,
        headers: { location: '/console/policies/default?done=unchanged' },
      });
      const v2 = JSON.stringify({ limits: { USD: { per_transaction_cents: 80_000, review_above_cents: 20_000 } }, purposes: { permitted: ['travel'] } });
      expect((await b.send('POST', '/console/policies/default', { csrf, policy: v2 })).status).toBe(303);

      // The versions and the diff of the canonical pretty JSON.
      const versions = await b.send('GET', '/console/policies/default/versions');
      expect(versions.status).toBe(200);
      expect(versions.body).toContain('<h2>Version 1 → 2</h2>');
      expect(versions.body).toContain('<del>-       &#34;per_transaction_cents&#34;: 50000,</del>');
      expect(versions.body).toContain('<ins>+       &#34;per_transaction_cents&#34;: 80000,</ins>');
      expect(versions.body).toContain('<ins>+   &#34;purposes&#34;: {</ins>');
      expect((await b.send('GET', '/console/policies/default/versions?from=2&to=1')).body).toContain('<del>-   &#34;purposes&#34;: {</del>');
      expect((await b.send('GET', '/console/policies/default/versions?from=1&to=9')).status).toBe(404);
      expect((await b.send('GET', '/console/policies/nothing-here/versions')).status).toBe(404);
      expect((await b.send('GET', '/console/policies/bad%20id!')).status).toBe(404);

      // Simulate against the current version: the decision and the rules checked; a bad request is its field's message.
      const request = { amount_cents: 30_000, currency: 'USD', merchant_id: 'm_hotel', purpose_tag: 'travel', expiration_iso: new Date(Date.now() + 3600_000).toISOString() };
      const sim = await b.send('POST', '/console/policies/default/simulate', { csrf, request: JSON.stringify(request) });
      expect(sim.status).toBe(200);
      expect(sim.body).toMatch(/id="sim-decision">needs_review</);
      expect(sim.body).toContain('Result against version 2');
      const badSim = await b.send('POST', '/console/policies/default/simulate', { csrf, request: JSON.stringify({ ...request, currency: 'usd!' }) });
      expect(badSim.status).toBe(400);
      expect(badSim.body).toMatch(/<li data-field="currency"><code>currency<\/code>/);
      expect((await b.send('POST', '/console/policies/default/simulate', { request: JSON.stringify(request) })).status).toBe(403);
    });

    it('a viewer reads and simulates but cannot save (403); another organization\u2019s policy of the same id is its own', async () => {
      const admin = await person('admin');
      const csrf = admin.b.csrf((await admin.b.send('GET', '/console/policies/default')).body);
      expect((await admin.b.send('POST', '/console/policies/default', { csrf, policy: JSON.stringify({ purposes: { permitted: ['secret-purpose'] } }) })).status).toBe(303);

      const viewer = await person('viewer', admin.orgId);
      const page = await viewer.b.send('GET', '/console/policies/default');
      expect(page.status).toBe(200);
      expect(page.body).toContain('secret-purpose');
      expect(page.body).not.toContain('id="edit-policy"');
      const vcsrf = viewer.b.csrf(page.body);
      const refused = await viewer.b.send('POST', '/console/policies/default', { csrf: vcsrf, policy: '{}' });
      expect(refused.status).toBe(403);
      expect(refused.body).toContain('needs the scope payments:write');
      const request = { amount_cents: 100, currency: 'USD', merchant_id: 'm', purpose_tag: 'other', expiration_iso: new Date(Date.now() + 3600_000).toISOString() };
      const sim = await viewer.b.send('POST', '/console/policies/default/simulate', { csrf: vcsrf, request: JSON.stringify(request) });
      expect(sim.status).toBe(200);
      expect(sim.body).toMatch(/id="sim-decision">blocked<\/dd><dt>Reason<\/dt><dd>PURPOSE_NOT_PERMITTED</);

      const other = await person('admin');
      const theirs = await other.b.send('GET', '/console/policies/default');
      expect(theirs.body).toContain('no version yet');
      expect(theirs.body).not.toContain('secret-purpose');
      expect((await other.b.send('GET', '/console/policies/default/versions')).status).toBe(404);
    });
  });

  describe('certificates', () => {
    const listed = async (b: ConsoleClient, id: string) =>
      eventually(async () => {
        const page = await b.send('GET', '/console/certificates');
        return new RegExp(`data-certificate-id="${id}"`).test(page.body) && page;
      }, 15_000, `certificate ${id} listed`);

    it('issues from a file and from pasted text, lists them, publishes one, links the verify page; bad input is the form with its message', async () => {
      const { b } = await person('admin');
      const page = await b.send('GET', '/console/certificates');
      expect(page.status).toBe(200);
      expect(page.body).toContain('enctype="multipart/form-data"');
      const csrf = b.csrf(page.body);

      const fromFile = await b.send('POST', '/console/certificates', multipart({ csrf, content: '', artifact_type: 'dataset', visibility: 'private' }, [{ name: 'file', filename: 'rows<1>.csv', content: Buffer.from('a,b\n1,2\n') }]));
      expect(fromFile.status).toBe(200);
      const certId = /<code id="certificate-id">([0-9a-f-]{36})<\/code>/.exec(fromFile.body)![1];
      expect(fromFile.body).toContain(`href="/verify/${certId}"`);
      expect(fromFile.body).toContain(`action="/console/certificates/${certId}/publish"`);
      expect((await t.app.inject({ method: 'GET', url: `/verify/${certId}` })).statusCode).toBe(200);

      const pasted = await b.send('POST', '/console/certificates', multipart({ csrf, content: '{"b":1,"a":2}', artifact_type: 'output', visibility: 'public' }));
      expect(pasted.status).toBe(200);
      const pastedId = /<code id="certificate-id">([0-9a-f-]{36})<\/code>/.exec(pasted.body)![1];
      expect(pasted.body).not.toContain('/publish"');

      const list = await listed(b, certId);
      expect(list.body).toMatch(new RegExp(`data-certificate-id="${certId}">.*?<td class="visibility">private</td>`));
      await listed(b, pastedId);

      // Publish: listed public.
      expect((await b.send('POST', `/console/certificates/${certId}/publish`, { csrf: 'forged' })).status).toBe(403);
      expect(await b.send('POST', `/console/certificates/${certId}/publish`, { csrf })).toMatchObject({ status: 303, headers: { location: '/console/certificates?done=published' } });
      await eventually(async () => new RegExp(`data-certificate-id="${certId}">.*?<td class="visibility">public</td>`).test((await b.send('GET', '/console/certificates')).body), 15_000, 'published');

      // Bad input: the form again with the field's message.
      const nothing = await b.send('POST', '/console/certificates', multipart({ csrf, content: '' }));
      expect(nothing.status).toBe(400);
      expect(nothing.body).toMatch(/data-field="content">choose a file or paste the content</);
      const binary = await b.send('POST', '/console/certificates', multipart({ csrf }, [{ name: 'file', filename: 'x.bin', content: Buffer.from([0xff, 0xfe, 0x00, 0xc3]) }]));
      expect(binary.status).toBe(400);
      expect(binary.body).toMatch(/data-field="file">must be a UTF-8 text file/);
      const badType = await b.send('POST', '/console/certificates', multipart({ csrf, content: 'x', artifact_type: '<img>' }));
      expect(badType.status).toBe(400);
      expect(badType.body).toContain('data-field="artifact_type"');
      expect(badType.body).not.toContain('<img>');
      // The API's size limit: over 5,000,000 characters is 413, said on the page.
      const big = await b.send('POST', '/console/certificates', multipart({ csrf }, [{ name: 'file', filename: 'big.txt', content: Buffer.alloc(5_000_001, 'a') }]));
      expect(big.status).toBe(413);
      expect(big.body).toMatch(/data-field="file">exceeds 5,000,000 characters/);
      expect((await b.send('GET', '/console/certificates?cursor=garbage')).status).toBe(400);
      // No CSRF token.
      expect((await b.send('POST', '/console/certificates', multipart({ content: 'x' }))).status).toBe(403);
      // The multipart parser answers console paths only: the API stays JSON.
      expect((await t.app.inject({ method: 'POST', url: '/api/notary/create', headers: { 'content-type': `multipart/form-data; boundary=x` }, payload: '--x--\r\n' })).statusCode).toBe(415);
    });

    it('another organization\u2019s certificate is the 404 page; a viewer sees the list but cannot issue or publish (403)', async () => {
      const admin = await person('admin');
      const csrf = admin.b.csrf((await admin.b.send('GET', '/console/certificates')).body);
      const issued = await admin.b.send('POST', '/console/certificates', multipart({ csrf, content: 'hello' }));
      const certId = /<code id="certificate-id">([0-9a-f-]{36})<\/code>/.exec(issued.body)![1];

      const other = await person('admin');
      const ocsrf = other.b.csrf((await other.b.send('GET', '/console/certificates')).body);
      const notTheirs = await other.b.send('POST', `/console/certificates/${certId}/publish`, { csrf: ocsrf });
      expect(notTheirs.status).toBe(404);
      expect(notTheirs.body).toContain('belongs to another organization');
      expect((await other.b.send('POST', '/console/certificates/not-a-uuid/publish', { csrf: ocsrf })).status).toBe(404);
      expect((await other.b.send('GET', '/console/certificates')).body).not.toContain(certId);

      const viewer = await person('viewer', admin.orgId);
      const page = await listed(viewer.b, certId);
      expect(page.body).not.toContain('id="issue"');
      expect(page.body).not.toContain('/publish"');
      const vcsrf = viewer.b.csrf(page.body);
      const refused = await viewer.b.send('POST', '/console/certificates', multipart({ csrf: vcsrf, content: 'x' }));
      expect(refused.status).toBe(403);
      expect(refused.body).toContain('needs the scope certificates:write');
      expect((await viewer.b.send('POST', `/console/certificates/${certId}/publish`, { csrf: vcsrf })).status).toBe(403);
    });
  });
});
