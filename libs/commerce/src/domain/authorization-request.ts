import { z } from 'zod';
import { agentIdField, amountField, currencyField, merchantIdField, policyIdField, purposeTagField } from './fields';
import { isIsoInstant, isStorableInstant } from './iso-instant';
import { invalid, required } from './validation';

export const AUTHORIZATION_SCHEMA = 'payment_authorization.v1';

/**
 * The `payment_authorization.v1` request. `amount_cents` is in the currency's minor units
 * (`minorUnits(currency)`: yen have none, dinars three), whatever the field's name says.
 */
export type AuthorizationRequest = {
  amount_cents: number;
  currency: string;
  merchant_id: string;
  purpose_tag: string;
  delegated_authority?: string;
  expiration_iso: string;
  policy_id?: string;
};

/**
 * Strict: an unknown field is refused (a misspelt `delegated_authorty` must not silently drop an
 * agent's limits). An expiry already past is valid input: the evaluator blocks it with EXPIRED,
 * so the refusal is recorded as a decision rather than lost as a 400.
 */
export const authorizationRequestSchema = z.strictObject(
  {
    amount_cents: amountField(),
    currency: currencyField(),
    merchant_id: merchantIdField(),
    purpose_tag: purposeTagField(),
    delegated_authority: agentIdField().optional(),
    expiration_iso: z
      .string({ error: required('an ISO-8601 date-time with a zone, e.g. 2026-12-31T23:59:59Z') })
      .refine(isIsoInstant, { error: 'must be a valid ISO-8601 date-time with a zone (Z or ±hh:mm), e.g. 2026-12-31T23:59:59Z', abort: true })
      .refine(isStorableInstant, { error: 'must be between the years 1 and 9999 (in UTC)' }),
    policy_id: policyIdField().optional(),
  },
  { error: (i) => (i.code === 'invalid_type' ? 'must be a JSON object' : undefined) },
);

/** Validates a request body; throws AppError 400 `validation_failed` naming every failing field. */
export function parseAuthorizationRequest(input: unknown): AuthorizationRequest {
  const result = authorizationRequestSchema.safeParse(input);
  if (!result.success) throw invalid('validation_failed', 'authorization request', result.error);
  return result.data;
}
