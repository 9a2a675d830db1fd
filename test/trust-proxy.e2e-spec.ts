import { startTestApp, TestApp } from './support/test-app';

/**
 * TRUST_PROXY as the proxies' addresses: X-Forwarded-For is read only on connections from them, so
 * a client that reaches the service directly is its own socket address, whatever header it sends.
 * (app.inject connects from 127.0.0.1 unless told otherwise.)
 */
describe('TRUST_PROXY with proxy addresses (e2e)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ TRUST_PROXY: '127.0.0.1, 10.0.0.0/8' });
  });
  afterAll(() => t?.close());

  /** The per-IP identity the request was counted under (the quota says it, counting nothing). */
  const identity = async (forwardedFor: string, remoteAddress: string) =>
    (await t.app.inject({ method: 'GET', url: '/api/agents/me/quota', remoteAddress, headers: { 'x-forwarded-for': forwardedFor } })).json().identity_key as string;

  it('takes the client from X-Forwarded-For behind a listed proxy, and the socket address on a direct connection', async () => {
    // Through a listed proxy (and a second one inside 10/8): the address the outermost saw.
    expect(await identity('198.51.100.7', '127.0.0.1')).toBe(await identity('198.51.100.7', '10.1.2.3'));
    expect(await identity('198.51.100.7, 10.4.4.4', '127.0.0.1')).toBe(await identity('198.51.100.7', '127.0.0.1'));
    expect(await identity('198.51.100.8', '127.0.0.1')).not.toBe(await identity('198.51.100.7', '127.0.0.1'));
    // Direct, from an unlisted address: the header is the client's own words and is ignored.
    const direct = await identity('198.51.100.7', '203.0.113.50');
    expect(await identity('198.51.100.99', '203.0.113.50')).toBe(direct);
    expect(direct).not.toBe(await identity('198.51.100.7', '127.0.0.1'));
  });
});
