import { generateKeyPairSync, sign } from 'node:crypto';
import { LookupResult, SettlementProvider, SettleOutcome, SettleRequest } from '@app/settlement';
import { commerceWorld } from '../transactions/transaction-spec-fixtures';
import { ExecutePaymentCommand } from './execute-payment.command';
import { ExecutePaymentHandler } from './execute-payment.handler';

const keys = generateKeyPairSync('ed25519');
const authority = { issuer: 'sigil.test', liveProvider: false, sign: (m: Uint8Array) => ({ key_id: 'key-1', signature: sign(null, m, keys.privateKey) }), refresh: async () => undefined };

/** A provider that answers what it is told to, and remembers what it settled (by idempotency key). */
class ScriptedProvider extends SettlementProvider {
  readonly name = 'sandbox';
  next: SettleOutcome[] = [];
  settled = new Map<string, string>();
  calls: SettleRequest[] = [];
  async settle(r: SettleRequest): Promise<SettleOutcome> {
    this.calls.push(r);
    const o = this.next.shift() ?? { outcome: 'succeeded', provider_reference: `sbx_${r.idempotency_key.slice(4, 10)}` };
    if (o.outcome === 'succeeded') this.settled.set(r.idempotency_key, o.provider_reference);
    return o;
  }
  async lookup(key: string): Promise<LookupResult> {
    const ref = this.settled.get(key);
    return ref ? { outcome: 'succeeded', provider_reference: ref } : { outcome: 'not_found' };
  }
}

describe('ExecutePaymentHandler (settlement decisions by the aggregate, on the in-memory store)', () => {
  const setup = () => {
    const w = commerceWorld();
    const provider = new ScriptedProvider();
    return { ...w, provider, sut: new ExecutePaymentHandler(w.rows, w.transactions, { sandbox: provider }, authority, w.clock) };
  };
  const exec = (org: string, id: string) => new ExecutePaymentCommand(org, id, 'api_key:key_agent');

  it('settles once with the transaction id as the provider key, then issues a receipt bound to the success event', async () => {
    const { sut, store, provider, authorized } = setup();
    const t = await authorized('org_a', 4_000);
    const result = await sut.execute(exec('org_a', t.transaction_id));
    expect(result).toMatchObject({ outcome: 'succeeded', transaction: { status: 'receipt_issued', execution_state: 'succeeded' } });
    expect(provider.calls).toEqual([expect.objectContaining({ idempotency_key: t.transaction_id, amount_cents: 4_000, currency: 'USD', merchant_id: 'm_books' })]);
    const events = await store.readStream(`transaction-${t.transaction_id}`);
    expect(events.slice(-4).map((e) => e.type)).toEqual(['execution.initiated', 'execution.succeeded', 'receipt.issued', 'timeline.anchored']);
    expect(result.receipt!.payload).toMatchObject({ timeline_last_event_hash: events[events.length - 3].hash, amount_cents: 4_000, provider: 'sandbox', issuer: 'sigil.test' });
    // The receipt ends the transaction: its anchor names the receipt event.
    expect(events[events.length - 1].data).toMatchObject({ status: 'receipt_issued', anchor: { payload: { terminal_event_type: 'receipt.issued', last_event_hash: events[events.length - 2].hash } } });
    expect(await sut.execute(exec('org_a', t.transaction_id))).toMatchObject({ outcome: 'already_executed', receipt: result.receipt });
    expect(provider.calls).toHaveLength(1);
  });

  it('keeps a retryable failure authorized (the next attempt reuses the key), and makes a decline final', async () => {
    const { sut, provider, authorized } = setup();
    const t = await authorized('org_a');
    provider.next = [{ outcome: 'failed', code: 'provider_unavailable', retryable: true }];
    expect(await sut.execute(exec('org_a', t.transaction_id))).toMatchObject({ outcome: 'failed', retryable: true, transaction: { status: 'authorized', execution_state: 'failed' } });
    expect(await sut.execute(exec('org_a', t.transaction_id))).toMatchObject({ outcome: 'succeeded' });
    expect(provider.calls.map((c) => c.idempotency_key)).toEqual([t.transaction_id, t.transaction_id]);
    const d = await authorized('org_a', 1_002);
    provider.next = [{ outcome: 'declined', code: 'insufficient_funds' }];
    expect(await sut.execute(exec('org_a', d.transaction_id))).toMatchObject({ outcome: 'declined', retryable: false, transaction: { status: 'declined', execution_state: 'declined' } });
    await expect(sut.execute(exec('org_a', d.transaction_id))).rejects.toMatchObject({ code: 'payment_declined' });
  });

  it('records a decline as a final execution.failed that ends the transaction declined; a retryable failure is not final', async () => {
    const { sut, store, provider, authorized } = setup();
    const t = await authorized('org_a');
    provider.next = [{ outcome: 'failed', code: 'provider_unavailable', retryable: true }, { outcome: 'declined', code: 'do_not_honor' }];
    await sut.execute(exec('org_a', t.transaction_id));
    await sut.execute(exec('org_a', t.transaction_id));
    const failures = (await store.readStream(`transaction-${t.transaction_id}`)).filter((e) => e.type === 'execution.failed');
    expect(failures.map((e) => e.data)).toEqual([
      expect.objectContaining({ status: 'authorized', retryable: true, final: false, error_code: 'provider_unavailable' }),
      expect.objectContaining({ status: 'declined', retryable: false, final: true, error_code: 'do_not_honor' }),
    ]);
    expect(provider.calls).toHaveLength(2);
  });

  it('refuses what is not authorized, another organization, and a closed window, recording nothing', async () => {
    const { sut, store, escalated, authorized, clock } = setup();
    const pending = await escalated('org_a');
    await expect(sut.execute(exec('org_a', pending.transaction_id))).rejects.toMatchObject({ code: 'transaction_not_authorized', details: { status: 'needs_review' } });
    await expect(sut.execute(exec('org_b', pending.transaction_id))).rejects.toMatchObject({ code: 'not_found' });
    const late = await authorized('org_a', 4_000, '2026-11-25T10:30:00.000Z');
    const before = (await store.readAll()).events.length;
    clock.advance(3600_000);
    await expect(sut.execute(exec('org_a', late.transaction_id))).rejects.toMatchObject({ code: 'authorization_expired' });
    expect((await store.readAll()).events).toHaveLength(before);
  });

  it('issues the receipt owed by a transaction left executed without one', async () => {
    const { sut, store, provider, authorized, transactions, rows } = setup();
    const t = await authorized('org_a');
    const row = (await rows.byId('org_a', t.transaction_id))!;
    const ids = { transaction_id: t.transaction_id, authorization_id: t.authorization_id, organization_id: 'org_a' };
    await transactions.save({ transaction_id: t.transaction_id, revision: Number(row.revision) }, [
      { type: 'execution.initiated', data: { ...ids, status: 'authorized', attempt: 1, provider: 'sandbox', provider_idempotency_key: t.transaction_id, amount_cents: 4_000 }, metadata: { actor: 'a', correlation_id: t.transaction_id } },
      { type: 'execution.succeeded', data: { ...ids, status: 'executed', attempt: 1, provider: 'sandbox', provider_reference: 'sbx_crash', amount_cents: 4_000 }, metadata: { actor: 'a', correlation_id: t.transaction_id } },
    ]);
    const result = await sut.execute(exec('org_a', t.transaction_id));
    expect(result).toMatchObject({ outcome: 'already_executed', transaction: { status: 'receipt_issued' }, receipt: { payload: { provider_reference: 'sbx_crash' } } });
    expect(provider.calls).toHaveLength(0);
    expect((await store.readStream(`transaction-${t.transaction_id}`)).filter((e) => e.type === 'receipt.issued')).toHaveLength(1);
  });
});
