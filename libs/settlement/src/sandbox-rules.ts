/**
 * The sandbox's behaviour, decided by the request alone, like card-network test numbers.
 * A merchant id names it outright; otherwise the amount's last two digits (in minor units) do:
 *
 * | merchant_id  | amount ends in | behaviour |
 * |--------------|----------------|-----------|
 * | `m_decline`  | `02`           | `decline`: declined `insufficient_funds`, final for the key |
 * | `m_fail`     | `05`           | `fail_once`: the first attempt per key fails `provider_unavailable` (a 5xx, retryable); a retry with the same key succeeds |
 * | `m_timeout`  | `08`           | `timeout`: answers `unknown`, but the payment DID settle: `lookup` and a retry with the same key return `succeeded` |
 * | anything else | anything else | `succeed` |
 */
export type SandboxBehaviour = 'succeed' | 'decline' | 'fail_once' | 'timeout';

const BY_MERCHANT: Record<string, SandboxBehaviour> = { m_decline: 'decline', m_fail: 'fail_once', m_timeout: 'timeout' };
const BY_CENTS: Record<number, SandboxBehaviour> = { 2: 'decline', 5: 'fail_once', 8: 'timeout' };

export function sandboxBehaviour(amountCents: number, merchantId: string): SandboxBehaviour {
  return BY_MERCHANT[merchantId] ?? BY_CENTS[amountCents % 100] ?? 'succeed';
}

export const SANDBOX_DECLINE_CODE = 'insufficient_funds';
export const SANDBOX_FAILURE_CODE = 'provider_unavailable';
