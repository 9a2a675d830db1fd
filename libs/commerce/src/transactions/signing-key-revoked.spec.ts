import { randomBytes } from 'node:crypto';
import { fixedClock, MAX_SIGNING_ATTEMPTS, SigningKeyRevoked } from '@app/core';
import { InMemoryEventStore, NewEvent } from '@app/event-store';
import { InMemorySigningKeySecrets, SigningKeyRepository, SigningKeyStore } from '@app/notary';
import { AuthorizePaymentCommand } from '../authorize-payment/authorize-payment.command';
import { AuthorizePaymentHandler } from '../authorize-payment/authorize-payment.handler';
import { policyHash, PolicyDocument } from '../domain/policy';
import { SIGNING_KEY_GUARD, transactionsProjection } from './transaction.projection';
import { TransactionRepository } from './transaction.repository';

/**
 * A ring that has not heard of a revocation (`stale`) beside the store's own: what it signs is
 * refused as it is written, and each writer signs again once its keys reload, or gives up.
 */
describe('commerce writers whose signing keys are out of date (in-memory store)', () => {
  const clock = fixedClock('2026-11-25T10:00:00.000Z');
  let store: InMemoryEventStore;
  let ring: SigningKeyStore;
  let stale: SigningKeyStore['current'];
  let compromised: string;

  beforeEach(async () => {
    store = new InMemoryEventStore(() => clock.now());
    store.registerProjection(transactionsProjection);
    ring = new SigningKeyStore(new SigningKeyRepository(store, new InMemorySigningKeySecrets()), randomBytes(32));
    await ring.start();
    stale = ring.current;
    compromised = stale.active().key_id;
    await ring.revoke(compromised);
  });

  const ids = () => {
    const hex = randomBytes(16).toString('hex');
    return { transaction_id: `txn_${hex}`, authorization_id: `auth_${hex}`, organization_id: 'org_a' };
  };
  /** A transaction that ends unsigned (an expiry): only its anchor is signed. */
  const expired = (t: ReturnType<typeof ids>): NewEvent[] => [
    {
      type: 'authorization.requested',
      data: { ...t, status: 'evaluating', policy_id: 'default', policy_hash: null, policy_version: null, mode: 'test', provider: 'sandbox', request: { amount_cents: 100, currency: 'USD', merchant_id: 'm', purpose_tag: 'p', expiration_iso: '2026-11-25T09:00:00Z' } },
      metadata: { actor: 'api_key:k', correlation_id: t.transaction_id },
    },
    { type: 'authorization.rejected', data: { ...t, status: 'expired', decision: 'blocked', reason_code: 'EXPIRED', rejected_by: 'expiry', released: [] }, metadata: { actor: 'system:expiry', correlation_id: t.transaction_id } },
  ];
  const anchorKey = async (t: ReturnType<typeof ids>) => {
    const events = await store.readStream(`transaction-${t.transaction_id}`);
    const anchor = events.find((e) => e.type === 'timeline.anchored');
    return anchor ? (anchor.data as { anchor: { signature: { key_id: string } } }).anchor.signature.key_id : null;
  };

  it('an anchor refused for a revoked key is signed again after the keys reload, in the save that ended the timeline', async () => {
    let signer = stale;
    const repo = new TransactionRepository(store, { issuer: 'sigil.test', sign: (m) => signer.sign(m), clock, refresh: async () => void (signer = ring.current) });
    const t = ids();
    await repo.saveNew(t.transaction_id, expired(t));
    expect(await anchorKey(t)).toBe(ring.current.active().key_id);
  });

  it('an anchor still refused does not fail the terminal save: the sweep then writes it with a fresh ring', async () => {
    const failures: unknown[] = [];
    let reloads = 0;
    const deaf = new TransactionRepository(store, { issuer: 'sigil.test', sign: (m) => stale.sign(m), clock, refresh: async () => void reloads++, onError: (err) => failures.push(err) });
    const t = ids();
    await deaf.saveNew(t.transaction_id, expired(t));
    expect(failures).toEqual([expect.any(SigningKeyRevoked)]);
    expect(reloads).toBe(MAX_SIGNING_ATTEMPTS - 1);
    expect(await anchorKey(t)).toBeNull();
    // The sweep of a process that never hears of it fails loudly; one whose ring reloads anchors it.
    await expect(deaf.anchorIfTerminal(t.transaction_id)).rejects.toBeInstanceOf(SigningKeyRevoked);
    let signer = stale;
    const sweeping = new TransactionRepository(store, { issuer: 'sigil.test', sign: (m) => signer.sign(m), clock, refresh: async () => void (signer = ring.current) });
    expect(await sweeping.anchorIfTerminal(t.transaction_id)).toBe(true);
    expect(await anchorKey(t)).toBe(ring.current.active().key_id);
  });

  it('a whole group commit of saveNew is refused, each caller with its own SigningKeyRevoked; nothing is written', async () => {
    const repo = new TransactionRepository(store);
    const signed = (t: ReturnType<typeof ids>, keyId: string): NewEvent[] => [
      expired(t)[0],
      { type: 'authorization.approved', data: { ...t, status: 'authorized', decision: 'authorized', decision_record: { signature: { key_id: keyId } } }, metadata: { actor: 'api_key:k', correlation_id: t.transaction_id } },
    ];
    const [a, b] = [ids(), ids()];
    const results = await Promise.allSettled([repo.saveNew(a.transaction_id, signed(a, ring.current.active().key_id)), repo.saveNew(b.transaction_id, signed(b, compromised))]);
    expect(results.map((r) => r.status === 'rejected' && r.reason instanceof SigningKeyRevoked)).toEqual([true, true]);
    expect((results[0] as PromiseRejectedResult).reason).not.toBe((results[1] as PromiseRejectedResult).reason);
    expect(store.rows('commerce_transactions')).toEqual([]);
    expect(SIGNING_KEY_GUARD).toBe('commerce_signing_key_not_revoked');
  });

  it('an authorization whose keys never catch up answers 409 concurrent_modification after MAX_SIGNING_ATTEMPTS, recording nothing', async () => {
    const policy: PolicyDocument = { limits: { USD: { per_transaction_cents: 50_000 } }, merchants: { blocked: [], allowed: null } };
    let reloads = 0;
    const authority = { issuer: 'sigil.test', liveProvider: false, sign: (m: Uint8Array) => stale.sign(m), refresh: async () => void reloads++ };
    const handler = new AuthorizePaymentHandler(
      { current: async () => ({ version: 1, policy, policy_hash: policyHash(policy) }) },
      new TransactionRepository(store),
      { spent: async () => new Map() },
      authority,
      clock,
    );
    const request = { amount_cents: 1_500, currency: 'USD', merchant_id: 'm_books', purpose_tag: 'software', expiration_iso: '2026-11-26T00:00:00Z' };
    await expect(handler.execute(new AuthorizePaymentCommand('org_a', 'api_key:k', 'test', request as never))).rejects.toMatchObject({ code: 'concurrent_modification', retryAfterSeconds: 1 });
    expect(reloads).toBe(MAX_SIGNING_ATTEMPTS - 1);
    expect(store.rows('commerce_transactions')).toEqual([]);
  });
});
