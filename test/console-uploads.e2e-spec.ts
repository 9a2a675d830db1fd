import { randomBytes } from 'node:crypto';
import { AddressInfo, connect } from 'node:net';
import { startTestApp, TestApp } from './support/test-app';

/**
 * multipart/form-data is taken by one route alone (the console's certificate form, with its larger
 * limit, after its session is checked); everywhere else a large multipart body is refused at once,
 * before it is read: the client sends the headers and a first few bytes of a 5 MB body, and the
 * answer comes back without the rest ever being sent (both modes).
 */
describe('console uploads: multipart only where it belongs (e2e)', () => {
  let t: TestApp;
  let port: number;

  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMITS: 'off' });
    await t.app.listen(0, '127.0.0.1');
    port = (t.app.getHttpServer().address() as AddressInfo).port;
  }, 60_000);
  afterAll(async () => {
    await t?.close();
  });

  /** Headers for a 5 MB multipart body and its first 1 KiB only; the answer's status line and body, or a timeout. */
  const partial = (path: string, extra = '') =>
    new Promise<{ status: number; raw: string }>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1');
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new Error(`no answer from ${path} before the body was sent`));
      }, 3_000);
      let raw = '';
      socket.on('data', (d) => {
        raw += d.toString('latin1');
        if (raw.includes('\r\n\r\n')) {
          clearTimeout(timer);
          socket.destroy();
          resolve({ status: Number(raw.slice(9, 12)), raw });
        }
      });
      socket.on('error', reject);
      socket.write(`POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; boundary=xyz\r\nContent-Length: ${5 * 1024 * 1024}\r\n${extra}\r\n`);
      socket.write(`--xyz\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\n${'a'.repeat(1024)}`);
    });

  it('refuses a 5 MB multipart body to the API and to the sign-in form before reading it', async () => {
    const api = await partial('/api/cdp/authorize', 'Authorization: Bearer cdp_test_nope\r\n');
    expect([413, 415]).toContain(api.status);
    const signIn = await partial('/console/sign-in');
    expect([413, 415]).toContain(signIn.status);
    expect((await partial('/api/notary/create')).status).toBe(415);
  });

  it('the upload route checks the session before reading: none is the sign-in page, unread', async () => {
    const res = await partial('/console/certificates');
    expect(res.status).toBe(303);
    expect(res.raw).toMatch(/location: \/console\/sign-in/i);
    const forged = await partial('/console/certificates', `Cookie: sigil_session=sgs_${randomBytes(32).toString('hex')}\r\n`);
    expect(forged.status).toBe(303);
  });

  it('a small multipart body to a JSON route is 415 with the error envelope', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/api/cdp/authorize', headers: { 'content-type': 'multipart/form-data; boundary=x' }, payload: '--x--\r\n' });
    expect(res.statusCode).toBe(415);
    expect(res.json()).toMatchObject({ error: 'unsupported_media_type' });
  });
});
