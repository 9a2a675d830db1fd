import { randomBytes } from 'node:crypto';
import type { NewEvent } from '@app/event-store';

const hex = (bytes: number) => randomBytes(bytes).toString('hex');

/**
 * Commerce events shaped as the commerce contract fixes them (stream `transaction-<id>`, every
 * field the transactions projection reads), for suites and benchmarks that consume them without
 * driving the commerce API.
 */
export function commerceLifecycle(orgId: string, path: 'full' | 'approved' | 'rejected' = 'full', actor = `api_key:key_${hex(6)}`) {
  const transactionId = `txn_${hex(16)}`;
  const authorizationId = `auth_${hex(16)}`;
  const policy = { policy_id: 'default', policy_hash: `sha256:${'ab'.repeat(32)}` };
  const ev = (type: string, status: string, data: Record<string, unknown> = {}, by = actor): NewEvent => ({
    type,
    data: { transaction_id: transactionId, authorization_id: authorizationId, organization_id: orgId, status, ...data },
    metadata: { actor: by, correlation_id: transactionId },
  });
  const requested = ev('authorization.requested', 'evaluating', {
    request: { amount_cents: 12_500, currency: 'USD', merchant_id: 'm_books', purpose_tag: 'software', expiration_iso: '2099-01-01T00:00:00.000Z' },
    ...policy,
    policy_version: 1,
    mode: 'test',
    provider: 'sandbox',
  });
  const decided = { ...policy, evaluated_at: new Date().toISOString(), spend: [], reservations: [] };
  const events: NewEvent[] =
    path === 'approved'
      ? [requested, ev('authorization.approved', 'authorized', { decision: 'authorized', reason_code: null, ...decided })]
      : path === 'rejected'
        ? [requested, ev('authorization.rejected', 'rejected', { decision: 'blocked', reason_code: 'MERCHANT_BLOCKED', rejected_by: 'policy', ...decided })]
        : [
            requested,
            ev('authorization.escalated', 'needs_review', { decision: 'needs_review', reason_code: 'AMOUNT_ABOVE_REVIEW', ...decided }),
            ev('authorization.human_approved', 'authorized', { approver: 'key_reviewer', note: 'ok', amount_cents: 12_000, released: [] }),
            ev('execution.initiated', 'authorized', { attempt: 1, provider: 'sandbox', provider_idempotency_key: hex(8), amount_cents: 12_000 }, 'system:settlement'),
            ev('execution.failed', 'authorized', { attempt: 1, provider: 'sandbox', error_code: 'provider_unavailable', retryable: true }, 'system:settlement'),
            ev('execution.initiated', 'authorized', { attempt: 2, provider: 'sandbox', provider_idempotency_key: hex(8), amount_cents: 12_000 }, 'system:settlement'),
            ev('execution.succeeded', 'executed', { attempt: 2, provider: 'sandbox', provider_reference: `sbx_${hex(6)}`, amount_cents: 12_000 }, 'system:settlement'),
            ev('receipt.issued', 'receipt_issued', { receipt_hash: `sha256:${hex(32)}`, key_id: '00000000-0000-4000-8000-000000000000' }, 'system:receipts'),
          ];
  return { transactionId, stream: `transaction-${transactionId}`, events };
}
