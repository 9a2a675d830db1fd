import { fixedClock } from '@app/core';
import type { PolicyService } from '../policies/policy.service';
import { QuotePaymentHandler } from './quote-payment.handler';
import { QuotePaymentQuery } from './quote-payment.query';

const request = { amount_cents: 1_500, currency: 'USD', merchant_id: 'm_books', purpose_tag: 'software', expiration_iso: '2026-11-26T00:00:00Z' };

describe('QuotePaymentHandler', () => {
  it("quotes against the request's policy (default when it names none), as the simulation evaluates it", async () => {
    const asked: string[] = [];
    const policies = {
      simulate: async (_org: string, policyId: string) => {
        asked.push(policyId);
        return { policy_id: policyId, version: 2, policy_hash: 'h', evaluated_at: '2026-11-25T10:00:00.000Z', decision: 'authorized', reason_code: null, checks: [], spend_caps_evaluated_against: 'recorded_spend' };
      },
    } as unknown as PolicyService;
    const sut = new QuotePaymentHandler(policies, fixedClock('2026-11-25T10:00:00.000Z'));
    expect(await sut.execute(new QuotePaymentQuery('org_a', request as never))).toMatchObject({ quoted: true, policy_id: 'default', version: 2, decision: 'authorized' });
    await sut.execute(new QuotePaymentQuery('org_a', { ...request, policy_id: 'travel' } as never));
    expect(asked).toEqual(['default', 'travel']);
  });

  it('without such a policy, quotes what authorize would record: blocked, POLICY_NOT_FOUND', async () => {
    const sut = new QuotePaymentHandler({ simulate: async () => null } as unknown as PolicyService, fixedClock('2026-11-25T10:00:00.000Z'));
    expect(await sut.execute(new QuotePaymentQuery('org_a', request as never))).toMatchObject({
      quoted: true,
      version: null,
      policy_hash: null,
      decision: 'blocked',
      reason_code: 'POLICY_NOT_FOUND',
      evaluated_at: '2026-11-25T10:00:00.000Z',
    });
  });
});
