import { Webhook } from 'standardwebhooks';
import { generateEd25519KeyPair, privateKeyFromPkcs8, signEd25519, verifyEd25519 } from '@app/crypto';
import { newEndpointSecret, signedContent, signWebhook } from './signing';

describe('Standard Webhooks signing', () => {
  const pair = generateEd25519KeyPair();
  const signer = { sign: (m: Uint8Array) => ({ key_id: 'k1', signature: signEd25519(privateKeyFromPkcs8(pair.privateKeyPkcs8), m) }) };
  const body = JSON.stringify({ id: 'e1', event_type: 'receipt.issued', note: 'ünïcode ✓' });
  const now = Math.floor(Date.now() / 1000);

  it('makes whsec_ secrets of 32 random bytes', () => {
    const s = newEndpointSecret();
    expect(s).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(s.slice(6), 'base64')).toHaveLength(32);
    expect(newEndpointSecret()).not.toBe(s);
  });

  it('signs so the standardwebhooks library verifies with each live secret, and v1a with the public key', () => {
    const [current, previous, other] = [newEndpointSecret(), newEndpointSecret(), newEndpointSecret()];
    const headers = signWebhook('msg_1', now, body, [current, previous], signer);
    expect(headers['webhook-signature'].split(' ').map((s) => s.split(',')[0])).toEqual(['v1', 'v1', 'v1a']);
    expect(new Webhook(current).verify(body, { ...headers })).toEqual(JSON.parse(body));
    expect(new Webhook(previous).verify(body, { ...headers })).toEqual(JSON.parse(body));
    expect(() => new Webhook(other).verify(body, { ...headers })).toThrow();
    expect(() => new Webhook(current).verify(body.replace('e1', 'e2'), { ...headers })).toThrow();

    const v1a = headers['webhook-signature'].split(' ').find((s) => s.startsWith('v1a,'))!.slice(4);
    expect(verifyEd25519(pair.publicKey, signedContent('msg_1', now, body), Buffer.from(v1a, 'base64'))).toBe(true);
    expect(verifyEd25519(pair.publicKey, signedContent('msg_2', now, body), Buffer.from(v1a, 'base64'))).toBe(false);
  });
});
