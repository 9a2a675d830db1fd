import { SandboxSettlementProvider } from './sandbox-provider';

describe('SandboxSettlementProvider', () => {
  const req = (amountCents: number, idempotencyKey = `k-${amountCents}`) => ({ idempotencyKey, amountCents, currency: 'USD', description: 't' });

  it('succeeds, declines on ..02 and fails retryably on ..05, deterministically', async () => {
    const p = new SandboxSettlementProvider();
    expect(await p.charge(req(1000))).toMatchObject({ status: 'succeeded', providerReference: expect.stringMatching(/^sbx_[0-9a-f]{24}$/) });
    expect(await p.charge(req(1002))).toMatchObject({ status: 'declined', reason: 'insufficient_funds' });
    expect(await p.charge(req(1005))).toEqual({ status: 'failed', reason: 'provider_unavailable', retryable: true });
  });

  it('answers a repeated idempotency key with the first outcome, and looks it up', async () => {
    const p = new SandboxSettlementProvider();
    const first = await p.charge(req(1000, 'same'));
    expect(await p.charge(req(999_999, 'same'))).toEqual(first);
    expect(await p.lookup('same')).toEqual(first);
    expect(await p.lookup('never')).toBeNull();
  });
});
