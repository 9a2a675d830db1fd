import { SigilClient, SigilClientOptions } from './sigil-client';
import { SigilError } from './errors';

type Reply = Response | Error | ((init: RequestInit) => Promise<Response>);

/** A fake fetch that answers from a script and records every call; a fake sleep that records waits. */
function harness(replies: Reply[], options: Partial<SigilClientOptions> = {}) {
  const calls: Array<{ url: string; method: string; headers: Record<string, string>; body?: string }> = [];
  const sleeps: number[] = [];
  const fetch = (async (url: string, init: RequestInit) => {
    calls.push({ url, method: String(init.method), headers: { ...(init.headers as Record<string, string>) }, body: init.body as string | undefined });
    const next = replies.shift();
    if (next === undefined) throw new Error('the script ran out of replies');
    if (next instanceof Error) throw next;
    if (typeof next === 'function') return next(init);
    return next;
  }) as unknown as typeof globalThis.fetch;
  const client = new SigilClient({
    baseUrl: 'https://sigil.test/',
    apiKey: 'cdp_test_abc',
    fetch,
    sleep: async (ms) => void sleeps.push(ms),
    random: () => 0,
    now: () => Date.parse('2025-06-01T12:00:00Z'),
    ...options,
  });
  return { client, calls, sleeps };
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json; charset=utf-8', ...headers } });
const text = (status: number, body: string, headers: Record<string, string> = {}) => new Response(body, { status, headers: { 'content-type': 'text/plain', ...headers } });
const rateLimited = (headers: Record<string, string> = {}) => json(429, { ok: false, error: 'rate_limited', message: 'Too many requests' }, headers);

async function failure(p: Promise<unknown>): Promise<SigilError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(SigilError);
    return err as SigilError;
  }
  throw new Error('expected the call to fail');
}

describe('SigilClient.request: the backoff contract', () => {
  it('sends the key, JSON headers and query, and parses a JSON response', async () => {
    const { client, calls } = harness([json(200, { items: [], total: 0, next_cursor: null })]);
    await expect(client.request('GET', '/v1/registry', { query: { status: 'certified', limit: 5, q: undefined } })).resolves.toEqual({ items: [], total: 0, next_cursor: null });
    expect(calls).toEqual([{ url: 'https://sigil.test/v1/registry?status=certified&limit=5', method: 'GET', headers: { accept: 'application/json', authorization: 'Bearer cdp_test_abc' }, body: undefined }]);
  });

  it('honours Retry-After in seconds, then succeeds', async () => {
    const { client, calls, sleeps } = harness([rateLimited({ 'retry-after': '2' }), rateLimited({ 'retry-after': '7' }), json(200, { ok: true })]);
    await expect(client.request('GET', '/x')).resolves.toEqual({ ok: true });
    expect(calls).toHaveLength(3);
    expect(sleeps).toEqual([2000, 7000]);
  });

  it('honours Retry-After as an HTTP date', async () => {
    const { client, sleeps } = harness([json(503, { ok: false, error: 'rate_limiter_unavailable', message: 'later' }, { 'retry-after': 'Sun, 01 Jun 2025 12:00:05 GMT' }), json(200, {})]);
    await client.request('GET', '/x');
    expect(sleeps).toEqual([5000]);
  });

  it('without Retry-After waits 500 ms, 1 s, 2 s, 4 s, 8 s and stops after 6 attempts in total', async () => {
    const { client, calls, sleeps } = harness(Array.from({ length: 10 }, () => rateLimited()));
    const err = await failure(client.request('GET', '/x'));
    expect(calls).toHaveLength(6);
    expect(sleeps).toEqual([500, 1000, 2000, 4000, 8000]);
    expect(err).toMatchObject({ status: 429, code: 'rate_limited', retryable: true, attempts: 6 });
  });

  it('adds jitter below 500 ms to every wait, Retry-After included', async () => {
    const { client, sleeps } = harness([rateLimited({ 'retry-after': '1' }), rateLimited(), rateLimited(), json(200, {})], { random: () => 0.999999 });
    await client.request('GET', '/x');
    expect(sleeps).toHaveLength(3);
    // Retry-After 1 s, then the exponential delays of attempts 2 and 3.
    [1000, 1000, 2000].forEach((base, i) => {
      expect(sleeps[i]).toBeGreaterThanOrEqual(base);
      expect(sleeps[i]).toBeLessThan(base + 500);
    });
    expect(sleeps).toEqual([1499, 1499, 2499]);
  });

  it('does not retry a 400, a 404, a 500, a 502, or a 429/503 whose body says retryable: false', async () => {
    const cases = [
      json(400, { ok: false, error: 'validation_failed', message: 'bad', details: [{ field: 'x', message: 'y' }] }, { 'x-request-id': 'req-1' }),
      json(404, { ok: false, error: 'not_found', message: 'certificate x not found' }),
      json(500, { ok: false, error: 'internal_error', message: 'Internal server error' }),
      json(429, { ok: false, error: 'quota_exhausted', message: 'no', retryable: false }, { 'retry-after': '1' }),
      json(503, { ok: false, error: 'provider_down', message: 'no', retryable: false }),
      json(503, { ok: false, error: 'provider_down', message: 'no', details: { retryable: false } }),
      json(502, { ok: false, error: 'settlement_failed', message: 'retry', details: { retryable: true } }, { 'retry-after': '1' }),
    ];
    const expected = [
      { status: 400, code: 'validation_failed', retryable: false, requestId: 'req-1' },
      { status: 404, code: 'not_found', message: 'certificate x not found' },
      { status: 500, code: 'internal_error', retryable: false },
      { status: 429, code: 'quota_exhausted', retryable: false, retryAfterMs: 1000 },
      { status: 503, code: 'provider_down', retryable: false },
      { status: 503, code: 'provider_down', retryable: false },
      // Retryable by its own flag, but not a status the contract retries: the caller decides.
      { status: 502, code: 'settlement_failed', retryable: true, retryAfterMs: 1000 },
    ];
    for (let i = 0; i < cases.length; i++) {
      const { client, calls, sleeps } = harness([cases[i], json(200, {})]);
      const err = await failure(client.request('GET', '/x'));
      expect(err).toMatchObject({ ...expected[i], attempts: 1 });
      expect(calls).toHaveLength(1);
      expect(sleeps).toEqual([]);
    }
  });

  it('sends one Idempotency-Key per logical POST, the same on every retry, and a new one per call', async () => {
    const { client, calls } = harness([rateLimited(), json(503, { ok: false, error: 'service_unavailable', message: 'x' }), new TypeError('fetch failed'), json(200, { id: 1 }), json(200, { id: 2 })]);
    await client.request('POST', '/api/cdp/authorize', { body: { amount_cents: 100 } });
    await client.request('POST', '/api/cdp/authorize', { body: { amount_cents: 100 } });
    const keys = calls.map((c) => c.headers['idempotency-key']);
    expect(keys[0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(keys.slice(0, 4)).toEqual([keys[0], keys[0], keys[0], keys[0]]);
    expect(keys[4]).not.toBe(keys[0]);
    expect(calls[0]).toMatchObject({ method: 'POST', body: '{"amount_cents":100}', headers: { 'content-type': 'application/json' } });
  });

  it('uses a caller’s Idempotency-Key as given, and none on GET or read-only POSTs', async () => {
    const { client, calls } = harness([json(200, {}), json(200, {}), json(200, {})]);
    await client.request('POST', '/a', { body: {}, idempotencyKey: 'order-42' });
    await client.request('GET', '/b');
    await client.request('POST', '/api/verify', { body: {}, readOnly: true });
    expect(calls.map((c) => c.headers['idempotency-key'])).toEqual(['order-42', undefined, undefined]);
  });

  it('retries network errors on requests safe to repeat, but not on a POST without an Idempotency-Key', async () => {
    const get = harness([new TypeError('fetch failed'), new TypeError('fetch failed'), json(200, { ok: 1 })]);
    await expect(get.client.request('GET', '/x')).resolves.toEqual({ ok: 1 });
    expect(get.sleeps).toEqual([500, 1000]);

    const post = harness([new TypeError('fetch failed'), json(200, {})]);
    const err = await failure(post.client.request('POST', '/x', { body: {}, idempotencyKey: false }));
    expect(err).toMatchObject({ status: 0, code: 'network_error', retryable: false, attempts: 1 });
    expect(err.cause).toBeInstanceOf(TypeError);
    expect(post.calls).toHaveLength(1);

    const keyed = harness([new TypeError('fetch failed'), json(200, { done: true })]);
    await expect(keyed.client.request('POST', '/x', { body: {} })).resolves.toEqual({ done: true });

    const always = harness(Array.from({ length: 8 }, () => new TypeError('fetch failed')));
    expect(await failure(always.client.request('GET', '/x'))).toMatchObject({ code: 'network_error', retryable: true, attempts: 6 });
    expect(always.calls).toHaveLength(6);
  });

  it('checks the Content-Type: a plain-text 503 is retried and surfaces as text; JSON variants are parsed', async () => {
    const { client, calls } = harness([text(503, 'Service Unavailable'), text(503, 'Service Unavailable'), text(502, '<html>Bad gateway</html>', { 'content-type': 'text/html' })]);
    const err = await failure(client.request('GET', '/x'));
    expect(calls).toHaveLength(3);
    expect(err).toMatchObject({ status: 502, code: 'bad_gateway', message: '<html>Bad gateway</html>', body: '<html>Bad gateway</html>', retryable: false });

    const plain = harness(Array.from({ length: 6 }, () => text(503, 'upstream overloaded')));
    expect(await failure(plain.client.request('GET', '/x'))).toMatchObject({ status: 503, code: 'service_unavailable', message: 'upstream overloaded', attempts: 6 });

    const manifest = harness([new Response('{"schema_version":"service.manifest.v1"}', { status: 200, headers: { 'content-type': 'application/service.manifest+json' } })]);
    await expect(manifest.client.request('GET', '/d')).resolves.toEqual({ schema_version: 'service.manifest.v1' });
    const plainOk = harness([text(200, 'pong')]);
    await expect(plainOk.client.request('GET', '/t')).resolves.toBe('pong');
    const broken = harness([new Response('{oops', { status: 200, headers: { 'content-type': 'application/json' } })]);
    expect(await failure(broken.client.request('GET', '/j'))).toMatchObject({ code: 'invalid_response', status: 200 });
    const brokenError = harness([new Response('{oops', { status: 400, headers: { 'content-type': 'application/json' } })]);
    expect(await failure(brokenError.client.request('GET', '/j'))).toMatchObject({ code: 'bad_request', message: '{oops' });
  });

  it('surfaces a Retry-After longer than maxRetryAfterMs at once instead of waiting', async () => {
    const { client, calls, sleeps } = harness([rateLimited({ 'retry-after': '3600' }), json(200, {})]);
    expect(await failure(client.request('GET', '/x'))).toMatchObject({ status: 429, retryAfterMs: 3_600_000, attempts: 1 });
    expect(calls).toHaveLength(1);
    expect(sleeps).toEqual([]);
  });

  it('times out an attempt as a network error, and does not retry when the caller aborts', async () => {
    const hang = (init: RequestInit) =>
      new Promise<Response>((_, reject) => init.signal!.addEventListener('abort', () => reject(init.signal!.reason)));
    const t = harness([hang, json(200, { late: false })], { timeoutMs: 20 });
    await expect(t.client.request('GET', '/slow')).resolves.toEqual({ late: false });
    expect(t.calls).toHaveLength(2);
    const t2 = harness([hang], { timeoutMs: 20 });
    expect(await failure(t2.client.request('POST', '/slow', { body: {}, idempotencyKey: false }))).toMatchObject({ code: 'timeout', status: 0 });

    const controller = new AbortController();
    const a = harness([hang, json(200, {})], { timeoutMs: 0 });
    const pending = a.client.request('GET', '/slow', { signal: controller.signal });
    controller.abort(new Error('user gave up'));
    await expect(pending).rejects.toThrow('user gave up');
    expect(a.calls).toHaveLength(1);
  });
});

describe('SigilClient typed methods', () => {
  it('call the service’s paths', async () => {
    const replies = Array.from({ length: 14 }, () => json(200, {}));
    const { client, calls } = harness(replies);
    const id = '0b8a1f9e-5a6c-4c1e-9a51-2f1a7b0d9c11';
    await client.getCertificate(id);
    await client.getSignedPayload(id);
    await client.verify({ certificate_id: id, artifact_hash: 'sha256:' + 'a'.repeat(64) });
    await client.verifyHash({ hash: 'a'.repeat(64) });
    await client.getSigningKeys();
    await client.listRegistry({ artifact_type: 'dataset', limit: 10 });
    await client.issueCertificate({ content: '{"a":1}', filename: 'a.json' });
    await client.getQuota({ agentDid: 'did:cd:agent:bot-1' });
    await client.getPredictionProof(id, 'sha256:' + 'b'.repeat(64));
    const txn = 'txn_' + 'c'.repeat(32);
    await client.authorize({ amount_cents: 100, currency: 'USD', merchant_id: 'm', purpose_tag: 'travel', expiration_iso: '2030-01-01T00:00:00Z' });
    await client.executeTransaction(txn, { idempotencyKey: 'exec-1' });
    await client.getTransactionEvents(txn);
    await client.getReceipt(txn);
    await client.getDecisionRecord(txn);
    expect(calls.map((c) => `${c.method} ${c.url.replace('https://sigil.test', '')}`)).toEqual([
      `GET /api/certificates/${id}`,
      `GET /api/certificates/${id}/signed-payload`,
      'POST /api/verify',
      'POST /api/verify/hash',
      'GET /.well-known/signing-keys.json',
      'GET /v1/registry?artifact_type=dataset&limit=10',
      'POST /api/notary/create',
      'GET /api/agents/me/quota',
      `GET /api/predictions/proof?certificate_id=${id}&hash=sha256%3A${'b'.repeat(64)}`,
      'POST /api/cdp/authorize',
      `POST /api/cdp/transactions/${txn}/execute`,
      `GET /api/cdp/transactions/${txn}/events`,
      `GET /api/cdp/receipts/${txn}`,
      `GET /api/cdp/transactions/${txn}/decision`,
    ]);
    expect(calls[9].headers['idempotency-key']).toMatch(/^[0-9a-f-]{36}$/);
    expect(calls[10].headers['idempotency-key']).toBe('exec-1');
    expect(calls[2].headers['idempotency-key']).toBeUndefined();
    expect(calls[6].headers['idempotency-key']).toBeDefined();
    expect(calls[7].headers['x-agent-did']).toBe('did:cd:agent:bot-1');
  });

  it('does not retry issuance after a network error (the route does not replay by key yet)', async () => {
    const { client, calls } = harness([new TypeError('fetch failed'), json(200, {})]);
    expect(await failure(client.issueCertificate({ content: 'x' }))).toMatchObject({ code: 'network_error', retryable: false });
    expect(calls).toHaveLength(1);
  });

  it('refuses a body on GET before sending anything', async () => {
    const { client, calls } = harness([json(200, {})]);
    await expect(client.request('GET', '/x', { body: { a: 1 } })).rejects.toThrow(TypeError);
    expect(calls).toHaveLength(0);
  });

  it('escapes path parameters', async () => {
    const { client, calls } = harness([json(200, {})]);
    await client.getCertificate('../admin?x=1');
    expect(calls[0].url).toBe('https://sigil.test/api/certificates/..%2Fadmin%3Fx%3D1');
  });
});

describe('SigilClient.verifyCertificateLocally', () => {
  it('refuses a genuine certificate served in place of the one asked for', async () => {
    const { ServerSigner } = await import('../../test/server-signer');
    const server = new ServerSigner();
    const served = server.manifest(server.payload());
    const fetch = (async (url: string) =>
      json(200, url.endsWith('/.well-known/signing-keys.json') ? server.keysDocument() : served)) as unknown as typeof globalThis.fetch;
    const client = new SigilClient({ baseUrl: 'https://sigil.test/', fetch, sleep: async () => undefined });
    expect(await client.verifyCertificateLocally(served.payload.certification_id)).toMatchObject({ valid: true });
    const asked = '00000000-0000-4000-8000-000000000000';
    expect(await client.verifyCertificateLocally(asked)).toMatchObject({ valid: false, reason: 'certificate_id_mismatch', certificate_id: served.payload.certification_id });
  });
});
