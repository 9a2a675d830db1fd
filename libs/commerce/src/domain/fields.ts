import { z } from 'zod';
import { isCurrency } from './currencies';
import { parseListingBound } from './iso-instant';
import { required } from './validation';

/**
 * Field rules shared by the authorization request and the policy document, so that whatever a
 * policy names (a merchant, a purpose, an agent) can be matched by a request.
 */

/** An opaque merchant id: 1..128 of letters, digits, `_ . : -`; no spaces, never a display name. */
export const MERCHANT_ID = /^[A-Za-z0-9_.:-]{1,128}$/;
/** A purpose tag: 1..64 of letters, digits, `_ . -`. Matched case-insensitively. */
export const PURPOSE_TAG = /^[A-Za-z0-9_.-]{1,64}$/;
/** A policy id: 1..64 of letters, digits, `_ -` (it is a path segment). */
export const POLICY_ID = /^[A-Za-z0-9_-]{1,64}$/;
/**
 * An agent id (`delegated_authority`): 1..256 printable characters, no control, format or
 * private-use characters and no surrounding whitespace, so two ids that look alike are alike.
 * Matched exactly.
 */
const AGENT_PRINTABLE = /^[^\p{C}\s](?:[^\p{C}]*[^\p{C}\s])?$/u;
export const MAX_AGENT_ID = 256;

export const isMerchantId = (v: unknown): v is string => typeof v === 'string' && MERCHANT_ID.test(v);
export const isPurposeTag = (v: unknown): v is string => typeof v === 'string' && PURPOSE_TAG.test(v);
export const isPolicyId = (v: unknown): v is string => typeof v === 'string' && POLICY_ID.test(v);
export const isAgentId = (v: unknown): v is string =>
  typeof v === 'string' && v.length >= 1 && v.length <= MAX_AGENT_ID && AGENT_PRINTABLE.test(v);

/** Purpose tags compare case-insensitively: `Travel` matches a policy permitting `travel`. */
export const normalizePurpose = (tag: string): string => tag.toLowerCase();

export const merchantIdField = () =>
  z.string({ error: required('a string') }).regex(MERCHANT_ID, { error: 'must be an opaque id: 1..128 of letters, digits, _ . : - (no spaces)' });

export const purposeTagField = () =>
  z.string({ error: required('a string') }).regex(PURPOSE_TAG, { error: 'must be 1..64 of letters, digits, _ . -' });

export const policyIdField = () =>
  z.string({ error: required('a string') }).regex(POLICY_ID, { error: 'must be a policy id: 1..64 of letters, digits, _ -' });

export const agentIdField = () =>
  z
    .string({ error: required('a string') })
    .refine(isAgentId, { error: `must be 1..${MAX_AGENT_ID} printable characters without surrounding spaces` });

export const currencyField = () =>
  z
    .string({ error: required('a string') })
    .regex(/^[A-Z]{3}$/, { error: 'must be an ISO 4217 code: 3 upper-case letters', abort: true })
    .refine(isCurrency, { error: (i) => `must be an ISO 4217 currency code; ${JSON.stringify(i.input)} is not one` });

/** A positive amount in minor units: a safe integer ≥ 1 (never a float, a string or zero). */
export const amountField = () =>
  z
    .number({ error: required('a positive integer (minor units)') })
    .int({ error: 'must be an integer number of minor units', abort: true })
    .min(1, { error: 'must be positive' })
    .max(Number.MAX_SAFE_INTEGER, { error: 'is too large' });

/** A listing's `from` / `to`: a date or date-time (see parseListingBound), passed on as its canonical ISO instant. */
export const listingBoundField = () =>
  z.string().transform((v, ctx) => {
    const instant = parseListingBound(v);
    if (instant === null) ctx.addIssue({ code: 'custom', message: 'must be an ISO-8601 date or date-time' });
    return instant ?? z.NEVER;
  });
