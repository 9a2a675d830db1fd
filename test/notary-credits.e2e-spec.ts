import { randomBytes } from 'node:crypto';
import { AccessService } from '@app/access';
import { CreditsService, ReconcileCreditCheckoutsCommand, ReconcileCreditCheckoutsHandler } from '@app/notary';
import { LookupResult, SettleOutcome, SettlementProvider, SettleRequest } from '@app/settlement';
import { startTestApp, TestApp } from './support/test-app';

/** A provider whose next outcomes the test decides. */
class ScriptedProvider extends SettlementProvider {
  readonly name = 'scripted';
  readonly settles: SettleRequest[] = [];
  next: SettleOutcome[] = [];
  lookups: LookupResult[] = [];
  /** Charges, then dies before answering (the process that asked never learns the outcome). */
  crashAfterCharge = false;
  /** What this provider knows it charged, by key: a settle or lookup with that key answers it. */
  readonly charged = new Map<string, LookupResult>();
  async settle(request: SettleRequest): Promise<SettleOutcome> {
    this.settles.push(request);
    const known = this.charged.get(request.idempotency_key);
    if (known && known.outcome !== 'not_found') return known;
    if (this.crashAfterCharge) {
      this.crashAfterCharge = false;
      this.charged.set(request.idempotency_key, { outcome: 'succeeded', provider_reference: `ref-${this.settles.length}` });
      throw new Error('connection reset after the charge');
    }
    return this.next.shift() ?? { outcome: 'succeeded', provider_reference: `ref-${this.settles.length}` };
  }
  async lookup(key: string): Promise<LookupResult> {
    return this.charged.get(key) ?? this.lookups.shift() ?? { outcome: 'not_found' };
  }
}

describe('notary credits (e2e)', () => {
  let t: TestApp;
  let scripted: TestApp;
  const provider = new ScriptedProvider();
  beforeAll(async () => {
    t = await startTestApp({ TRUST_PROXY: 'true' });
    scripted = await startTestApp({ TRUST_PROXY: 'true' }, [], { settlementProvider: provider });
  });
  afterAll(async () => {
    await t?.close();
    await scripted?.close();
  });

  const ip = () => `10.${randomBytes(1)[0]}.${randomBytes(1)[0]}.${randomBytes(1)[0]}`;
  const keyIn = async (app: TestApp, scopes: Parameters<AccessService['createApiKey']>[1]['scopes'] = ['certificates:write']) => {
    const access = app.app.get(AccessService);
    const org = await access.createOrganization(`credits-${randomBytes(3).toString('hex')}`);
    return { orgId: org.org_id, key: (await access.createApiKey(org.org_id, { scopes, mode: 'test' })).key };
  };
  const post = (app: TestApp, url: string, key: string | null, payload: unknown, headers: Record<string, string> = {}) =>
    app.app.inject({ method: 'POST', url, payload: payload as object, headers: { 'x-forwarded-for': ip(), ...(key ? { authorization: `Bearer ${key}` } : {}), ...headers } });
  const issue = (app: TestApp, key: string, n: number) => post(app, '/api/notary/create', key, { content: `doc ${n} ${randomBytes(4).toString('hex')}` });

  it('buys credits through the sandbox provider, and each credit is one more issuance past the free three', async () => {
    const { key } = await keyIn(t);
    for (let i = 0; i < 3; i++) expect((await issue(t, key, i)).statusCode).toBe(200);
    expect((await issue(t, key, 3)).statusCode).toBe(402);

    const bought = await post(t, '/api/payments/notary-credits-checkout', key, { credits: 2 });
    expect(bought.statusCode).toBe(200);
    expect(bought.json()).toMatchObject({ status: 'completed', credits: 2, amount_cents: 200, provider: 'sandbox', provider_reference: expect.stringMatching(/^sbx_/), credits_purchased_total: 2 });
    expect((await issue(t, key, 4)).statusCode).toBe(200);
    expect((await issue(t, key, 5)).statusCode).toBe(200);
    expect((await issue(t, key, 6)).json()).toMatchObject({ error: 'notary_paywall' });
  });

  it('treats a repeated Idempotency-Key as the same checkout, and a duplicate completion adds nothing', async () => {
    const { key, orgId } = await keyIn(t);
    const first = await post(t, '/api/payments/notary-credits-checkout', key, { credits: 5 }, { 'idempotency-key': 'order-77' });
    const again = await post(t, '/api/payments/notary-credits-checkout', key, { credits: 5 }, { 'idempotency-key': 'order-77' });
    expect(again.json().checkout_id).toBe(first.json().checkout_id);
    expect(again.json().credits_purchased_total).toBe(5);
    expect(again.headers['idempotent-replayed']).toBe('true');
    // The same key with another body is another request: refused, nothing charged.
    const other = await post(t, '/api/payments/notary-credits-checkout', key, { credits: 6 }, { 'idempotency-key': 'order-77' });
    expect(other.statusCode).toBe(422);
    expect(other.json()).toMatchObject({ error: 'idempotency_key_reused' });

    const credits = t.app.get(CreditsService);
    await credits.complete(orgId, first.json().checkout_id, 5, first.json().provider_reference);
    expect(await credits.purchased(orgId)).toBe(5);
  });

  it('adds no credits when the provider declines or fails', async () => {
    const { key, orgId } = await keyIn(scripted);
    provider.next = [
      { outcome: 'declined', code: 'insufficient_funds' },
      { outcome: 'failed', code: 'provider_unavailable', retryable: true },
    ];
    expect((await post(scripted, '/api/payments/notary-credits-checkout', key, { credits: 3 })).json()).toMatchObject({ status: 'declined', reason: 'insufficient_funds', credits_purchased_total: 0 });
    expect((await post(scripted, '/api/payments/notary-credits-checkout', key, { credits: 3 })).json()).toMatchObject({ status: 'failed', reason: 'provider_unavailable', credits_purchased_total: 0 });
    expect(await scripted.app.get(CreditsService).purchased(orgId)).toBe(0);
    expect(provider.settles.map((c) => c.amount_cents)).toEqual([300, 300]);
  });

  it('reconciles a timed-out settlement by looking it up: settled means credited, unknown means a retryable failure', async () => {
    const { key, orgId } = await keyIn(scripted);
    provider.next = [{ outcome: 'unknown' }, { outcome: 'unknown' }];
    provider.lookups = [{ outcome: 'succeeded', provider_reference: 'late-1' }];
    const settled = await post(scripted, '/api/payments/notary-credits-checkout', key, { credits: 2 });
    expect(settled.json()).toMatchObject({ status: 'completed', provider_reference: 'late-1', credits_purchased_total: 2 });
    const unknown = await post(scripted, '/api/payments/notary-credits-checkout', key, { credits: 2 });
    expect(unknown.json()).toMatchObject({ status: 'failed', reason: 'settlement_outcome_unknown', credits_purchased_total: 2 });
    expect(await scripted.app.get(CreditsService).purchased(orgId)).toBe(2);
  });

  it('reconciles a checkout whose outcome a crash lost: the charge went through, so its credits are bought, once', async () => {
    const { key, orgId } = await keyIn(scripted);
    provider.crashAfterCharge = true;
    const lost = await post(scripted, '/api/payments/notary-credits-checkout', key, { credits: 4 }, { 'idempotency-key': 'crash-1' });
    expect(lost.statusCode).toBe(500);
    expect(await scripted.app.get(CreditsService).purchased(orgId)).toBe(0);
    const reconcile = scripted.app.get(ReconcileCreditCheckoutsHandler);
    // Not yet: a checkout this recent may still be in flight.
    expect(await reconcile.execute(new ReconcileCreditCheckoutsCommand(100))).toBe(0);
    expect(await reconcile.execute(new ReconcileCreditCheckoutsCommand(100, 0))).toBeGreaterThanOrEqual(1);
    expect(await scripted.app.get(CreditsService).purchased(orgId)).toBe(4);
    // Settled now: a second pass finds nothing of this organization's, and buys nothing twice.
    await reconcile.execute(new ReconcileCreditCheckoutsCommand(100, 0));
    expect(await scripted.app.get(CreditsService).purchased(orgId)).toBe(4);
    // The client's retry with its key reaches the same charge and the same credits.
    const retried = await post(scripted, '/api/payments/notary-credits-checkout', key, { credits: 4 }, { 'idempotency-key': 'crash-1' });
    expect(retried.json()).toMatchObject({ status: 'completed', credits_purchased_total: 4 });
  });

  it('records a checkout the provider never charged, or whose outcome stayed unknown and turned out settled, when reconciled', async () => {
    const { key, orgId } = await keyIn(scripted);
    provider.next = [{ outcome: 'unknown' }];
    provider.lookups = [{ outcome: 'not_found' }];
    const unknown = await post(scripted, '/api/payments/notary-credits-checkout', key, { credits: 3 }, { 'idempotency-key': 'late-2' });
    expect(unknown.json()).toMatchObject({ status: 'failed', reason: 'settlement_outcome_unknown', credits_purchased_total: 0 });
    // The provider answers later that the charge went through: the reconciliation buys the credits.
    provider.charged.set(provider.settles[provider.settles.length - 1].idempotency_key, { outcome: 'succeeded', provider_reference: 'late-2' });
    await scripted.app.get(ReconcileCreditCheckoutsHandler).execute(new ReconcileCreditCheckoutsCommand(100, 0));
    expect(await scripted.app.get(CreditsService).purchased(orgId)).toBe(3);

    // One the provider never saw (the process died before asking) is recorded failed, and buys nothing.
    const other = await keyIn(scripted);
    provider.crashAfterCharge = false;
    const neverAsked = await post(scripted, '/api/payments/notary-credits-checkout', other.key, { credits: 0 });
    expect(neverAsked.statusCode).toBe(400); // (bad input never starts a checkout)
    await scripted.app.get(ReconcileCreditCheckoutsHandler).execute(new ReconcileCreditCheckoutsCommand(100, 0));
    expect(await scripted.app.get(CreditsService).purchased(other.orgId)).toBe(0);
  });

  it('refuses bad input, missing keys and keys without certificates:write', async () => {
    const { key } = await keyIn(t);
    for (const bad of [{}, { credits: 0 }, { credits: -1 }, { credits: 1.5 }, { credits: 'two' }, { credits: 10_001 }, { credits: 1, extra: true }]) {
      const res = await post(t, '/api/payments/notary-credits-checkout', key, bad);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ ok: false, error: 'validation_failed' });
    }
    // The one Idempotency-Key rule (1..255 printable ASCII), as on every route that takes one.
    expect((await post(t, '/api/payments/notary-credits-checkout', key, { credits: 1 }, { 'idempotency-key': 'x'.repeat(256) })).json()).toMatchObject({ error: 'invalid_idempotency_key' });
    expect((await post(t, '/api/payments/notary-credits-checkout', key, { credits: 1 }, { 'idempotency-key': 'clé' })).statusCode).toBe(400);
    expect((await post(t, '/api/payments/notary-credits-checkout', null, { credits: 1 })).statusCode).toBe(401);
    const { key: readOnly } = await keyIn(t, ['payments:read']);
    expect((await post(t, '/api/payments/notary-credits-checkout', readOnly, { credits: 1 })).statusCode).toBe(403);
  });
});
