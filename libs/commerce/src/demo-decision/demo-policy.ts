import type { PolicyDocument } from '../domain/policy';

/**
 * The fixed policy of the decision-ledger demo: anyone can try a payment_authorization.v1 request
 * against it without an account. Nothing is recorded; the decision comes back signed.
 */
export const DEMO_POLICY: PolicyDocument = {
  limits: { USD: { per_transaction_cents: 50_000, review_above_cents: 20_000 }, EUR: { per_transaction_cents: 50_000, review_above_cents: 20_000 } },
  merchants: { blocked: ['m_blocked_demo'], allowed: null },
  purposes: { permitted: ['travel', 'software', 'office', 'demo'] },
};
