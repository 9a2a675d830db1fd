import { generateKeyPairSync, sign, verify } from 'node:crypto';
import type { PolicyDocument } from '../domain/policy';
import { policyHash } from '../domain/policy';
import { verifyRecord } from '../receipts/signed-record';
import { commerceWorld, specAuthority, specSignatureCheck } from '../transactions/transaction-spec-fixtures';
import { AuthorizePaymentCommand } from './authorize-payment.command';
import { AuthorizePaymentHandler, CurrentPolicies } from './authorize-payment.handler';
import { RejectAuthorizationCommand } from '../reject-authorization/reject-authorization.command';
import { RejectAuthorizationHandler } from '../reject-authorization/reject-authorization.handler';

const keys = generateKeyPairSync('ed25519');
const authority = { issuer: 'sigil.test', liveProvider: false, sign: (m: Uint8Array) => ({ key_id: 'key-1', signature: sign(null, m, keys.privateKey) }), refresh: async () => undefined };
const policy: PolicyDocument = { limits: { USD: { per_transaction_cents: 50_000, review_above_cents: 20_000 } }, merchants: { blocked: ['m_bad'], allowed: null } };
const policies = (doc: PolicyDocument | null): CurrentPolicies => ({ current: async () => (doc ? { version: 3, policy: doc, policy_hash: policyHash(doc) } : null) });
const request = (over: Record<string, unknown> = {}) => ({ amount_cents: 1_500, currency: 'USD', merchant_id: 'm_books', purpose_tag: 'software', expiration_iso: '2026-11-26T00:00:00Z', ...over });
const capPolicy: PolicyDocument = { limits: { USD: { per_transaction_cents: 50_000 } }, spend_caps: [{ window: 'daily', currency: 'USD', amount_cents: 10_000 }] };

describe('AuthorizePaymentHandler (decision by the aggregate, saved on the in-memory store)', () => {
  const setup = (doc: PolicyDocument | null = policy) => {
    const w = commerceWorld();
    // What each cap window holds, as the transactions projection keeps it in the in-memory store.
    const spendRows = () => w.store.rows('commerce_spend') as { organization_id: string; cap_key: string; reserved_cents: number; cap_cents: number | null }[];
    const ledger = {
      spent: async (org: string, wins: readonly { key: string }[]) =>
        new Map(wins.map((win) => [win.key, Number(spendRows().find((r) => r.organization_id === org && r.cap_key === win.key)?.reserved_cents ?? 0)])),
    };
    return { ...w, spendRows, sut: new AuthorizePaymentHandler(policies(doc), w.transactions, ledger, authority, w.clock) };
  };

  it('records authorization.requested and its decision in one append, with a signed decision record, and answers the decision', async () => {
    const { sut, store, rows } = setup();
    const view = await sut.execute(new AuthorizePaymentCommand('org_a', 'api_key:key_agent', 'test', request() as never));
    expect(view).toMatchObject({ decision: 'authorized', status: 'authorized', policy_id: 'default', policy_hash: policyHash(policy), reason_code: null, created_at: '2026-11-25T10:00:00.000Z' });
    const events = await store.readStream(`transaction-${view.transaction_id}`);
    expect(events.map((e) => e.type)).toEqual(['authorization.requested', 'authorization.approved']);
    expect(events[0].data).toMatchObject({ status: 'evaluating', policy_version: 3, mode: 'test', provider: 'sandbox' });
    const record = (events[1].data as { decision_record: unknown }).decision_record;
    const byOurKey = (keyId: string, message: Uint8Array, signature: Uint8Array) =>
      keyId === 'key-1' && verify(null, message, keys.publicKey, signature) ? { valid: true as const } : { valid: false as const, reason: 'signature_invalid' as const };
    expect(verifyRecord(record, byOurKey)).toMatchObject({ valid: true, key_id: 'key-1' });
    expect(record).toMatchObject({ schema_version: 'payment_decision.v1', payload: { decision: 'authorized', policy_version: 3, issuer: 'sigil.test', decided_at: '2026-11-25T10:00:00.000Z' } });
    expect(await rows.byId('org_a', view.transaction_id)).toMatchObject({ status: 'authorized', decision: 'authorized', revision: 1 });
  });

  it('escalates above the review threshold and blocks a blocked merchant, each recorded with its reason', async () => {
    const { sut } = setup();
    expect(await sut.execute(new AuthorizePaymentCommand('org_a', 'api_key:k', 'test', request({ amount_cents: 25_000 }) as never))).toMatchObject({ decision: 'needs_review', status: 'needs_review' });
    expect(await sut.execute(new AuthorizePaymentCommand('org_a', 'api_key:k', 'test', request({ merchant_id: 'm_bad' }) as never))).toMatchObject({ decision: 'blocked', reason_code: 'MERCHANT_BLOCKED', status: 'rejected' });
  });

  it('a blocked decision ends the transaction: its timeline is anchored at once, naming the hash of the rejection', async () => {
    const { sut, store, rows } = setup();
    const view = await sut.execute(new AuthorizePaymentCommand('org_a', 'api_key:k', 'test', request({ merchant_id: 'm_bad' }) as never));
    const events = await store.readStream(`transaction-${view.transaction_id}`);
    expect(events.map((e) => e.type)).toEqual(['authorization.requested', 'authorization.rejected', 'timeline.anchored']);
    const anchor = (events[2].data as { anchor: { payload: Record<string, unknown> } }).anchor;
    expect(anchor).toMatchObject({ schema_version: 'payment_timeline_anchor.v1', payload: { terminal_status: 'rejected', last_event_revision: 1, event_count: 2, last_event_hash: events[1].hash } });
    expect(verifyRecord(anchor, specSignatureCheck)).toMatchObject({ valid: true });
    expect(await rows.byId('org_a', view.transaction_id)).toMatchObject({ status: 'rejected', revision: 2, anchored_revision: 2 });
  });

  it('blocks with POLICY_NOT_FOUND when the organization has no such policy, and live keys with no live provider settle nowhere', async () => {
    const { sut, store } = setup(null);
    const view = await sut.execute(new AuthorizePaymentCommand('org_a', 'api_key:k', 'live', request() as never));
    expect(view).toMatchObject({ decision: 'blocked', reason_code: 'POLICY_NOT_FOUND', policy_hash: null });
    expect((await store.readStream(`transaction-${view.transaction_id}`))[0].data).toMatchObject({ provider: 'unconfigured', mode: 'live' });
  });

  it('a request run again under its idempotent name (a crash left its key unanswered) answers the decision it recorded, and records nothing more', async () => {
    for (const doc of [policy, capPolicy]) {
      const { sut, store, clock } = setup(doc);
      const first = await sut.execute(new AuthorizePaymentCommand('org_a', 'api_key:k', 'test', request() as never, 'req-1'));
      expect(first.transaction_id).toMatch(/^txn_[0-9a-f]{32}$/);
      clock.advance(5_000);
      const again = await sut.execute(new AuthorizePaymentCommand('org_a', 'api_key:k', 'test', request() as never, 'req-1'));
      expect(again).toEqual(first);
      expect((await store.readAll()).events.filter((e) => e.type === 'authorization.requested')).toHaveLength(1);
      // Another request (another name) is another transaction.
      const other = await sut.execute(new AuthorizePaymentCommand('org_a', 'api_key:k', 'test', request() as never, 'req-2'));
      expect(other.transaction_id).not.toBe(first.transaction_id);
      expect(other.authorization_id).not.toBe(first.authorization_id);
    }
  });

  it('answers the recorded decision as it was made, even after the transaction moved on', async () => {
    const { sut, transactions, clock, store, rows, rules } = setup();
    const first = await sut.execute(new AuthorizePaymentCommand('org_a', 'api_key:k', 'test', request({ amount_cents: 25_000 }) as never, 'req-review'));
    expect(first).toMatchObject({ decision: 'needs_review', status: 'needs_review' });
    await new RejectAuthorizationHandler(rows, transactions, clock, specAuthority, rules).execute(new RejectAuthorizationCommand('org_a', first.authorization_id, 'api_key:reviewer', null));
    const again = await sut.execute(new AuthorizePaymentCommand('org_a', 'api_key:k', 'test', request({ amount_cents: 25_000 }) as never, 'req-review'));
    expect(again).toEqual(first);
    expect((await store.readStream(`transaction-${first.transaction_id}`)).map((e) => e.type)).toContain('authorization.rejected');
  });

  it('decides concurrent requests independently and saves them together', async () => {
    const { sut, store } = setup();
    const views = await Promise.all(Array.from({ length: 20 }, (_, i) => sut.execute(new AuthorizePaymentCommand('org_a', 'api_key:k', 'test', request({ merchant_id: `m_${i}` }) as never))));
    expect(new Set(views.map((v) => v.transaction_id)).size).toBe(20);
    expect((await store.readAll()).events).toHaveLength(40);
  });

  it('never passes a spend cap under concurrent requests: the losers of a race are decided again on what is left', async () => {
    const { sut, store, spendRows } = setup(capPolicy);
    // 20 requests of 15.00 against a daily cap of 100.00 all read "nothing spent" before any is saved.
    const views = await Promise.all(Array.from({ length: 20 }, (_, i) => sut.execute(new AuthorizePaymentCommand('org_a', 'api_key:k', 'test', request({ merchant_id: `m_${i}` }) as never))));
    const authorized = views.filter((v) => v.decision === 'authorized');
    expect(authorized).toHaveLength(6);
    expect(views.filter((v) => v.decision === 'blocked').every((v) => v.reason_code === 'SPEND_CAP_EXCEEDED')).toBe(true);
    expect(spendRows()).toEqual([expect.objectContaining({ organization_id: 'org_a', cap_key: 'daily:USD:2026-11-25', reserved_cents: 9_000, cap_cents: 10_000 })]);
    // Every request is one transaction with its decision, refusals included (each ended by its anchor); nothing half-written.
    expect((await store.readAll()).events).toHaveLength(40 + 14);
  });

  it('a rejection releases its reservation, so the room it held can be authorized again', async () => {
    const reviewed: PolicyDocument = { ...capPolicy, limits: { USD: { per_transaction_cents: 50_000, review_above_cents: 5_000 } } };
    const { sut, spendRows, rows, transactions, clock, rules } = setup(reviewed);
    const authority = specAuthority;
    const held = await sut.execute(new AuthorizePaymentCommand('org_a', 'api_key:k', 'test', request({ amount_cents: 9_000 }) as never));
    expect(held).toMatchObject({ decision: 'needs_review' });
    expect(spendRows()[0]).toMatchObject({ reserved_cents: 9_000, cap_cents: 10_000 });
    expect(await sut.execute(new AuthorizePaymentCommand('org_a', 'api_key:k', 'test', request({ amount_cents: 2_000 }) as never))).toMatchObject({ reason_code: 'SPEND_CAP_EXCEEDED' });
    await new RejectAuthorizationHandler(rows, transactions, clock, authority, rules).execute(new RejectAuthorizationCommand('org_a', held.authorization_id, 'api_key:reviewer', null));
    expect(spendRows()[0]).toMatchObject({ reserved_cents: 0 });
    expect(await sut.execute(new AuthorizePaymentCommand('org_a', 'api_key:k', 'test', request({ amount_cents: 2_000 }) as never))).toMatchObject({ decision: 'authorized' });
  });
});
