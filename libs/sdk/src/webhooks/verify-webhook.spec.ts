import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { fromBase64Url as serverFromBase64Url } from '@app/crypto';
import { ServerSigner } from '../../test/server-signer';
import { verifyWebhook, verifyWebhookOrThrow, WebhookVerificationError } from './verify-webhook';

const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

/** Signs a delivery as the service does (DESIGN "Queue"): v1 per endpoint secret, v1a with the active key. */
function serverHeaders(server: ServerSigner, id: string, ts: number, body: string, secrets: string[]) {
  const content = Buffer.from(`${id}.${ts}.${body}`, 'utf8');
  const v1 = secrets.map((s) => `v1,${createHmac('sha256', Buffer.from(s.slice(6), 'base64')).update(content).digest('base64')}`);
  const v1a = `v1a,${Buffer.from(server.ring.sign(content).signature).toString('base64')}`;
  return { 'webhook-id': id, 'webhook-timestamp': String(ts), 'webhook-signature': [...v1, v1a].join(' ') };
}

const body = JSON.stringify({ id: randomUUID(), event_type: 'authorization.approved', transaction_id: `txn_${'a'.repeat(32)}`, status: 'authorized', sequence: 2, metadata: { note: 'é 😀' } });

describe('verifyWebhook', () => {
  it('accepts what the standardwebhooks library signs (v1)', () => {
    for (let i = 0; i < 50; i++) {
      const secret = newSecret();
      const id = `msg_${randomUUID()}`;
      const payload = JSON.stringify({ n: i, text: randomBytes(i).toString('latin1') });
      const at = new Date(Math.floor(Date.now() / 1000) * 1000);
      const headers = { 'webhook-id': id, 'webhook-timestamp': String(at.getTime() / 1000), 'webhook-signature': new Webhook(secret).sign(id, at, payload) };
      expect(verifyWebhook(payload, headers, secret)).toEqual({ valid: true, id, timestamp: at.getTime() / 1000 });
      expect(verifyWebhook(payload + ' ', headers, secret)).toMatchObject({ valid: false, reason: 'no_matching_signature' });
    }
  });

  it('accepts the service’s deliveries with v1 (each live secret) and v1a (public key, whpk_, keys document), as standardwebhooks does', () => {
    const server = new ServerSigner(new Date(Date.now() - 86_400_000));
    const [oldSecret, newSecret_] = [newSecret(), newSecret()];
    const id = randomUUID();
    const ts = Math.floor(Date.now() / 1000);
    const headers = serverHeaders(server, id, ts, body, [newSecret_, oldSecret]);
    // The off-the-shelf verifier accepts our format, for both secrets during a rotation.
    expect(() => new Webhook(oldSecret).verify(body, headers)).not.toThrow();
    expect(() => new Webhook(newSecret_).verify(body, headers)).not.toThrow();

    const publicKey = server.ring.active().public_key;
    const whpk = `whpk_${Buffer.from(serverFromBase64Url(publicKey)!).toString('base64')}`;
    for (const key of [oldSecret, newSecret_, publicKey, whpk, server.keysDocument()] as const) {
      expect(verifyWebhook(body, headers, key as string)).toEqual({ valid: true, id, timestamp: ts });
    }
    // A v1a check never accepts a v1 entry, and the reverse.
    const onlyV1 = { ...headers, 'webhook-signature': headers['webhook-signature'].split(' ').filter((s) => s.startsWith('v1,')).join(' ') };
    expect(verifyWebhook(body, onlyV1, publicKey)).toMatchObject({ valid: false, reason: 'no_matching_signature' });
    const onlyV1a = { ...headers, 'webhook-signature': headers['webhook-signature'].split(' ').filter((s) => s.startsWith('v1a,')).join(' ') };
    expect(verifyWebhook(body, onlyV1a, oldSecret)).toMatchObject({ valid: false, reason: 'no_matching_signature' });
    expect(verifyWebhook(body, onlyV1a, publicKey)).toMatchObject({ valid: true });
  });

  it('refuses tampered bodies, ids and timestamps, and wrong keys, as standardwebhooks does for v1', () => {
    const server = new ServerSigner();
    const secret = newSecret();
    const id = randomUUID();
    const ts = Math.floor(Date.now() / 1000);
    const headers = serverHeaders(server, id, ts, body, [secret]);
    const publicKey = server.ring.active().public_key;
    const tampered: Array<[string, Record<string, string>]> = [
      [body.replace('authorized', 'rejected'), headers],
      [body, { ...headers, 'webhook-id': randomUUID() }],
      [body, { ...headers, 'webhook-timestamp': String(ts - 1) }],
    ];
    for (const [b, h] of tampered) {
      expect(() => new Webhook(secret).verify(b, h)).toThrow();
      expect(verifyWebhook(b, h, secret)).toMatchObject({ valid: false, reason: 'no_matching_signature' });
      expect(verifyWebhook(b, h, publicKey)).toMatchObject({ valid: false, reason: 'no_matching_signature' });
    }
    expect(verifyWebhook(body, headers, newSecret())).toMatchObject({ valid: false, reason: 'no_matching_signature' });
    expect(verifyWebhook(body, headers, new ServerSigner().ring.active().public_key)).toMatchObject({ valid: false, reason: 'no_matching_signature' });
    for (const bad of ['whsec_', 'whsec_!!!', 'not a key', 'whpk_AAAA', '', { keys: 'x' }]) {
      expect(verifyWebhook(body, headers, bad as string)).toMatchObject({ valid: false, reason: 'invalid_secret' });
    }
  });

  it('enforces the timestamp tolerance both ways (default 5 minutes), like standardwebhooks', () => {
    const secret = newSecret();
    const id = randomUUID();
    const ts = 1_750_000_000;
    const at = new Date(ts * 1000);
    const headers = { 'webhook-id': id, 'webhook-timestamp': String(ts), 'webhook-signature': new Webhook(secret).sign(id, at, body) };
    const at_ = (seconds: number) => ({ now: () => (ts + seconds) * 1000 });
    expect(verifyWebhook(body, headers, secret, at_(300))).toMatchObject({ valid: true });
    expect(verifyWebhook(body, headers, secret, at_(-300))).toMatchObject({ valid: true });
    expect(verifyWebhook(body, headers, secret, at_(301))).toMatchObject({ valid: false, reason: 'timestamp_too_old', id, timestamp: ts });
    expect(verifyWebhook(body, headers, secret, at_(-301))).toMatchObject({ valid: false, reason: 'timestamp_too_new' });
    expect(verifyWebhook(body, headers, secret, { ...at_(3600), toleranceSeconds: 3600 })).toMatchObject({ valid: true });
    // The reference library reads the real clock: a delivery an hour old fails there too.
    expect(() => new Webhook(secret).verify(body, { ...headers })).toThrow(/too old/);
    for (const bad of ['', 'abc', '1.5', '-1', '1e9']) {
      expect(verifyWebhook(body, { ...headers, 'webhook-timestamp': bad }, secret, at_(0))).toMatchObject({ valid: false, reason: bad === '' ? 'missing_headers' : 'invalid_timestamp' });
    }
  });

  it('reads headers from a Headers object, arrays, and any letter case; missing ones are reported', () => {
    const secret = newSecret();
    const id = randomUUID();
    const at = new Date(Math.floor(Date.now() / 1000) * 1000);
    const sig = new Webhook(secret).sign(id, at, body);
    const ts = String(at.getTime() / 1000);
    expect(verifyWebhook(body, new Headers({ 'Webhook-Id': id, 'Webhook-Timestamp': ts, 'Webhook-Signature': sig }), secret)).toMatchObject({ valid: true });
    expect(verifyWebhook(body, { 'Webhook-Id': id, 'WEBHOOK-TIMESTAMP': ts, 'webhook-signature': [sig, 'v1,AAAA'] }, secret)).toMatchObject({ valid: true });
    expect(verifyWebhook(new TextEncoder().encode(body), { 'webhook-id': id, 'webhook-timestamp': ts, 'webhook-signature': sig }, secret)).toMatchObject({ valid: true });
    for (const drop of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) {
      const headers: Record<string, string> = { 'webhook-id': id, 'webhook-timestamp': ts, 'webhook-signature': sig };
      delete headers[drop];
      expect(verifyWebhook(body, headers, secret)).toMatchObject({ valid: false, reason: 'missing_headers' });
    }
  });

  it('with a keys document, accepts the active key and a key retired after the timestamp, not one retired before', () => {
    const server = new ServerSigner(new Date(Date.now() - 10 * 86_400_000));
    const id = randomUUID();
    const ts = Math.floor(Date.now() / 1000);
    const signedByFirst = serverHeaders(server, id, ts, body, []);
    server.ring.rotate(new Date((ts + 60) * 1000)); // retired a minute after the delivery was signed
    expect(verifyWebhook(body, signedByFirst, server.keysDocument())).toMatchObject({ valid: true });
    const s2 = new ServerSigner(new Date(Date.now() - 10 * 86_400_000));
    const headers2 = serverHeaders(s2, id, ts, body, []);
    s2.ring.rotate(new Date((ts - 3600) * 1000)); // retired (grace included) before: it should not have signed this
    expect(verifyWebhook(body, headers2, s2.keysDocument())).toMatchObject({ valid: false, reason: 'no_matching_signature' });
  });

  it('verifyWebhookOrThrow throws WebhookVerificationError with the reason', () => {
    const secret = newSecret();
    const id = randomUUID();
    const at = new Date(Math.floor(Date.now() / 1000) * 1000);
    const headers = { 'webhook-id': id, 'webhook-timestamp': String(at.getTime() / 1000), 'webhook-signature': new Webhook(secret).sign(id, at, body) };
    expect(verifyWebhookOrThrow(body, headers, secret)).toEqual({ id, timestamp: at.getTime() / 1000 });
    let caught: unknown;
    try {
      verifyWebhookOrThrow(`${body} `, headers, secret);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(WebhookVerificationError);
    expect((caught as WebhookVerificationError).reason).toBe('no_matching_signature');
  });
});
