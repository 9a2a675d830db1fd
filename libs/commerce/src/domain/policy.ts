import { z } from 'zod';
import { canonicalJson, sha256Hex } from '@app/crypto';
import { isCurrency } from './currencies';
import { amountField, currencyField, isAgentId, merchantIdField, purposeTagField } from './fields';
import { invalid } from './validation';

export { isPolicyId } from './fields';

/** The policy an authorization uses when it names none (DESIGN.md). */
export const DEFAULT_POLICY_ID = 'default';
export const MAX_POLICY_LIST = 1000;
export const MAX_SPEND_CAPS = 100;

export type CapWindowKind = 'daily' | 'weekly' | 'monthly';
export const CAP_WINDOWS: readonly CapWindowKind[] = ['daily', 'weekly', 'monthly'];

export interface AmountLimits {
  per_transaction_cents?: number;
  /** Above this amount a request needs a human (needs_review). 0: every request does. */
  review_above_cents?: number;
}

export interface SpendCap {
  window: CapWindowKind;
  currency: string;
  amount_cents: number;
}

/**
 * The policy document (DESIGN.md). Every part is optional and an absent part imposes nothing:
 * - `limits`: per currency. Once any currency is listed, a currency that is not is blocked
 *   (AMOUNT_EXCEEDS_LIMIT); `{}` or no `limits` limits nothing.
 * - `spend_caps`: at most one per (window, currency); windows are UTC calendar days, ISO weeks
 *   (Monday 00:00 UTC) and calendar months.
 * - `merchants.blocked`; `merchants.allowed`: null or absent = any merchant, a list = only those
 *   (an empty list allows none).
 * - `purposes.permitted`: absent = any purpose, a list = only those, compared case-insensitively.
 * - `agents`: limits for a request whose `delegated_authority` equals the key, in the request
 *   currency's minor units, applied on top of the currency's.
 * Amounts are in minor units of their currency (`minorUnits`).
 */
export interface PolicyDocument {
  limits?: Record<string, AmountLimits>;
  spend_caps?: SpendCap[];
  merchants?: { blocked?: string[]; allowed?: string[] | null };
  purposes?: { permitted?: string[] };
  agents?: Record<string, AmountLimits>;
  /**
   * Who may review an escalated authorization: with `require_distinct_reviewer`, not the key that
   * asked, nor another key of its owner; with `approvals_required: 2`, two different reviewers
   * (different keys, and different owners) must approve before it is authorized (default 1).
   */
  review?: { require_distinct_reviewer?: boolean; approvals_required?: 1 | 2 };
}

const threshold = () =>
  z
    .number({ error: 'must be an integer number of minor units' })
    .int({ error: 'must be an integer number of minor units', abort: true })
    .min(0, { error: 'must not be negative' })
    .max(Number.MAX_SAFE_INTEGER, { error: 'is too large' });

const amountLimits = z
  .strictObject({ per_transaction_cents: amountField().optional(), review_above_cents: threshold().optional() }, { error: 'must be an object' })
  .superRefine((l, ctx) => {
    if (l.per_transaction_cents !== undefined && l.review_above_cents !== undefined && l.review_above_cents > l.per_transaction_cents) {
      ctx.addIssue({ code: 'custom', path: ['review_above_cents'], message: 'must not be above per_transaction_cents' });
    }
  });

const list = <T extends z.ZodType<string>>(item: T, what: string) =>
  z
    .array(item, { error: `must be an array of ${what}` })
    .max(MAX_POLICY_LIST, { error: `must list at most ${MAX_POLICY_LIST} ${what}` });

const spendCap = z.strictObject(
  {
    window: z.enum(CAP_WINDOWS as [CapWindowKind, ...CapWindowKind[]], { error: 'must be daily, weekly or monthly' }),
    currency: currencyField(),
    amount_cents: amountField(),
  },
  { error: 'must be an object' },
);

const objectError = { error: 'must be an object' } as const;

export const policySchema = z.strictObject(
  {
    limits: z
      .record(z.string(), amountLimits, objectError)
      .superRefine((limits, ctx) => {
        for (const code of Object.keys(limits)) {
          if (!isCurrency(code)) ctx.addIssue({ code: 'custom', path: [code], message: `${JSON.stringify(code)} is not an ISO 4217 currency code` });
        }
      })
      .optional(),
    spend_caps: z
      .array(spendCap, { error: 'must be an array of spend caps' })
      .max(MAX_SPEND_CAPS, { error: `must list at most ${MAX_SPEND_CAPS} spend caps` })
      .superRefine((caps, ctx) => {
        const seen = new Map<string, number>();
        caps.forEach((cap, i) => {
          const key = `${cap.window}:${cap.currency}`;
          const first = seen.get(key);
          if (first !== undefined) ctx.addIssue({ code: 'custom', path: [i], message: `repeats the ${cap.window} ${cap.currency} cap of spend_caps.${first}` });
          else seen.set(key, i);
        });
      })
      .optional(),
    merchants: z
      .strictObject({ blocked: list(merchantIdField(), 'merchant ids').optional(), allowed: list(merchantIdField(), 'merchant ids').nullable().optional() }, objectError)
      .optional(),
    purposes: z.strictObject({ permitted: list(purposeTagField(), 'purpose tags').optional() }, objectError).optional(),
    agents: z
      .record(z.string(), amountLimits, objectError)
      .superRefine((agents, ctx) => {
        const ids = Object.keys(agents);
        if (ids.length > MAX_POLICY_LIST) ctx.addIssue({ code: 'custom', path: [], message: `must list at most ${MAX_POLICY_LIST} agents` });
        for (const id of ids) {
          if (!isAgentId(id)) ctx.addIssue({ code: 'custom', path: [id], message: 'is not a valid agent id (1..256 printable characters)' });
        }
      })
      .optional(),
    review: z
      .strictObject(
        {
          require_distinct_reviewer: z.boolean({ error: 'must be true or false' }).optional(),
          approvals_required: z.union([z.literal(1), z.literal(2)], { error: 'must be 1 or 2 (the number of distinct reviewers who must approve)' }).optional(),
        },
        objectError,
      )
      .optional(),
  },
  { error: (i) => (i.code === 'invalid_type' ? 'a policy must be a JSON object' : undefined) },
);

// Keeps the zod schema and the documented interface in step.
const _sameShape: (p: z.infer<typeof policySchema>) => PolicyDocument = (p) => p;
void _sameShape;

/** Validates a policy document; throws AppError 400 `invalid_policy` naming every failing field. */
export function parsePolicy(input: unknown): PolicyDocument {
  const result = policySchema.safeParse(input);
  if (!result.success) throw invalid('invalid_policy', 'policy', result.error);
  return result.data;
}

/** Lowercase hex SHA-256 of the policy's RFC 8785 (JCS) form: the same policy, however spelt, has one hash. */
export const policyHash = (policy: PolicyDocument): string => sha256Hex(canonicalJson(policy));
