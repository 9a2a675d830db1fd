import type { AuthorizationRequest } from './authorization-request';
import { parseIsoInstant } from './iso-instant';
import { normalizePurpose } from './fields';
import type { AmountLimits, CapWindowKind, PolicyDocument } from './policy';

export type Decision = 'authorized' | 'blocked' | 'needs_review';

/**
 * Why a request was not simply authorized. The spec's four, plus:
 * - SPEND_CAP_EXCEEDED: the amount would take the window's recorded spend over a spend cap;
 * - POLICY_NOT_FOUND: the organization has no such policy (or no `default`);
 * - REVIEW_REQUIRED: the amount is above a review threshold (decision needs_review).
 */
export type ReasonCode =
  | 'AMOUNT_EXCEEDS_LIMIT'
  | 'MERCHANT_BLOCKED'
  | 'PURPOSE_NOT_PERMITTED'
  | 'EXPIRED'
  | 'SPEND_CAP_EXCEEDED'
  | 'POLICY_NOT_FOUND'
  | 'REVIEW_REQUIRED';

export const REASON_CODES: readonly ReasonCode[] = [
  'AMOUNT_EXCEEDS_LIMIT',
  'MERCHANT_BLOCKED',
  'PURPOSE_NOT_PERMITTED',
  'EXPIRED',
  'SPEND_CAP_EXCEEDED',
  'POLICY_NOT_FOUND',
  'REVIEW_REQUIRED',
];

/** One spend-cap window a request counts against; `key` names it uniquely per currency. */
export interface CapWindow {
  /** e.g. 'daily:USD:2026-11-21', 'weekly:USD:2026-11-16', 'monthly:USD:2026-11-01' (the window's first day). */
  key: string;
  window: CapWindowKind;
  currency: string;
  /** Inclusive, ISO-8601 UTC. */
  starts_at: string;
  /** Exclusive, ISO-8601 UTC. */
  ends_at: string;
  limit_cents: number;
}

export interface Check {
  rule: string;
  passed: boolean;
  detail?: string;
}

export interface Evaluation {
  decision: Decision;
  reason_code: ReasonCode | null;
  /** The rules checked, in order, up to the one that decided. */
  checks: Check[];
}

export interface EvaluationContext {
  now: Date;
  /** Amount already counted against a window (authorized or reserved), in its minor units; 0 when absent. */
  spent?: (window: CapWindow) => number;
}

const DAY_MS = 86_400_000;
const has = <T>(record: Record<string, T> | undefined, key: string | undefined): record is Record<string, T> =>
  record !== undefined && key !== undefined && Object.prototype.hasOwnProperty.call(record, key);

/** Start (inclusive) and end (exclusive) of the window containing `at`, in UTC. */
export function windowBounds(window: CapWindowKind, at: Date): { start: Date; end: Date } {
  const y = at.getUTCFullYear();
  const m = at.getUTCMonth();
  const day = Date.UTC(y, m, at.getUTCDate());
  switch (window) {
    case 'daily':
      return { start: new Date(day), end: new Date(day + DAY_MS) };
    case 'weekly': {
      // ISO week: Monday 00:00 UTC. getUTCDay() is 0 on Sunday.
      const start = day - ((at.getUTCDay() + 6) % 7) * DAY_MS;
      return { start: new Date(start), end: new Date(start + 7 * DAY_MS) };
    }
    case 'monthly':
      return { start: new Date(Date.UTC(y, m, 1)), end: new Date(Date.UTC(y, m + 1, 1)) };
  }
}

/** The policy's spend-cap windows that a request in `currency` at instant `at` counts against, in policy order. */
export function capWindows(policy: PolicyDocument, currency: string, at: Date): CapWindow[] {
  return (policy.spend_caps ?? [])
    .filter((cap) => cap.currency === currency)
    .map((cap) => {
      const { start, end } = windowBounds(cap.window, at);
      return {
        key: `${cap.window}:${currency}:${start.toISOString().slice(0, 10)}`,
        window: cap.window,
        currency,
        starts_at: start.toISOString(),
        ends_at: end.toISOString(),
        limit_cents: cap.amount_cents,
      };
    });
}

/**
 * Decides a request against a policy. Pure and deterministic: the same policy, request, instant
 * and spend always give the same evaluation, which is what replay relies on. Rules, in order;
 * the first that fails decides:
 *  1. expiry: `expiration_iso` at or before `now` → blocked EXPIRED (even with no policy);
 *  2. a policy exists, else → blocked POLICY_NOT_FOUND;
 *  3. merchant not in `merchants.blocked`, and in `merchants.allowed` when that is a list
 *     → else blocked MERCHANT_BLOCKED;
 *  4. purpose in `purposes.permitted` (case-insensitive) when listed → else PURPOSE_NOT_PERMITTED;
 *  5. per-transaction limits: when `limits` lists any currency, the request's must be listed and
 *     the amount at most its `per_transaction_cents`; then the agent's `per_transaction_cents`
 *     → else blocked AMOUNT_EXCEEDS_LIMIT;
 *  6. spend caps: for each window of the request's currency, spent + amount ≤ the cap
 *     → else blocked SPEND_CAP_EXCEEDED;
 *  7. review thresholds: amount above the currency's or the agent's `review_above_cents`
 *     → needs_review REVIEW_REQUIRED;
 *  8. otherwise authorized.
 */
export function evaluatePolicy(policy: PolicyDocument | null, request: AuthorizationRequest, context: EvaluationContext): Evaluation {
  const checks: Check[] = [];
  const blocked = (reason: ReasonCode): Evaluation => ({ decision: 'blocked', reason_code: reason, checks });
  const amount = request.amount_cents;

  const expiresAt = parseIsoInstant(request.expiration_iso);
  const live = expiresAt !== null && expiresAt > context.now.getTime();
  checks.push({ rule: 'expiry', passed: live, detail: `window ends ${request.expiration_iso}; evaluated at ${context.now.toISOString()}` });
  if (!live) return blocked('EXPIRED');

  checks.push({ rule: 'policy', passed: policy !== null, ...(policy ? {} : { detail: 'no policy with this id' }) });
  if (!policy) return blocked('POLICY_NOT_FOUND');

  const merchants = policy.merchants;
  if (merchants?.blocked) {
    const hit = merchants.blocked.includes(request.merchant_id);
    checks.push({ rule: 'merchant_blocked', passed: !hit, ...(hit ? { detail: `${request.merchant_id} is blocked` } : {}) });
    if (hit) return blocked('MERCHANT_BLOCKED');
  }
  if (merchants?.allowed) {
    const ok = merchants.allowed.includes(request.merchant_id);
    checks.push({ rule: 'merchant_allowed', passed: ok, ...(ok ? {} : { detail: `${request.merchant_id} is not on the allowed list` }) });
    if (!ok) return blocked('MERCHANT_BLOCKED');
  }

  if (policy.purposes?.permitted) {
    const tag = normalizePurpose(request.purpose_tag);
    const ok = policy.purposes.permitted.some((p) => normalizePurpose(p) === tag);
    checks.push({ rule: 'purpose_permitted', passed: ok, ...(ok ? {} : { detail: `${request.purpose_tag} is not a permitted purpose` }) });
    if (!ok) return blocked('PURPOSE_NOT_PERMITTED');
  }

  const anyLimits = policy.limits !== undefined && Object.keys(policy.limits).length > 0;
  const currencyLimits: AmountLimits | undefined = has(policy.limits, request.currency) ? policy.limits[request.currency] : undefined;
  if (anyLimits) {
    if (!currencyLimits) {
      checks.push({ rule: 'currency_limit', passed: false, detail: `the policy sets no limits for ${request.currency}` });
      return blocked('AMOUNT_EXCEEDS_LIMIT');
    }
    const max = currencyLimits.per_transaction_cents;
    const ok = max === undefined || amount <= max;
    checks.push({ rule: 'currency_limit', passed: ok, detail: max === undefined ? `no per-transaction limit for ${request.currency}` : `${amount} of at most ${max} ${request.currency}` });
    if (!ok) return blocked('AMOUNT_EXCEEDS_LIMIT');
  }

  const agentLimits: AmountLimits | undefined = has(policy.agents, request.delegated_authority) ? policy.agents[request.delegated_authority!] : undefined;
  if (agentLimits?.per_transaction_cents !== undefined) {
    const max = agentLimits.per_transaction_cents;
    const ok = amount <= max;
    checks.push({ rule: 'agent_limit', passed: ok, detail: `${amount} of at most ${max} for agent ${request.delegated_authority}` });
    if (!ok) return blocked('AMOUNT_EXCEEDS_LIMIT');
  }

  for (const w of capWindows(policy, request.currency, context.now)) {
    const spent = context.spent?.(w) ?? 0;
    const ok = spent + amount <= w.limit_cents;
    checks.push({ rule: 'spend_cap', passed: ok, detail: `${w.key}: ${spent} spent + ${amount} of at most ${w.limit_cents}` });
    if (!ok) return blocked('SPEND_CAP_EXCEEDED');
  }

  const reviews: Array<[string, number | undefined, string]> = [
    ['review_threshold', currencyLimits?.review_above_cents, request.currency],
    ['agent_review_threshold', agentLimits?.review_above_cents, `for agent ${request.delegated_authority}`],
  ];
  for (const [rule, above, what] of reviews) {
    if (above === undefined) continue;
    const ok = amount <= above;
    checks.push({ rule, passed: ok, detail: `${amount} ${ok ? 'within' : 'above'} the review threshold ${above} ${what}` });
    if (!ok) return { decision: 'needs_review', reason_code: 'REVIEW_REQUIRED', checks };
  }

  return { decision: 'authorized', reason_code: null, checks };
}
