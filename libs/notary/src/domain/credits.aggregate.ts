import { createHash, randomUUID } from 'node:crypto';
import { DomainError } from '@app/core';
import { NOTARY_CREDITS_PURCHASED } from '../certificates/certificate.projection';

/**
 * Issuance credits beyond the free quota, one stream per organization (`notary-credits-<org>`):
 * a completed purchase is NotaryCreditsPurchased (the certificates projection adds it to the
 * allowance), a declined or failed one NotaryCreditsCheckoutFailed. Event ids are derived from
 * the checkout, so recording the same outcome again is an idempotent replay.
 */
export const NOTARY_CREDITS_CHECKOUT_FAILED = 'notary_credits.checkout_failed';
/** Recorded before the provider is asked, so a charge whose outcome a crash lost is reconciled later. */
export const NOTARY_CREDITS_CHECKOUT_STARTED = 'notary_credits.checkout_started';
/** The reason a checkout whose outcome stayed unknown is recorded with (the reconciliation resolves it). */
export const OUTCOME_UNKNOWN = 'settlement_outcome_unknown';
export { NOTARY_CREDITS_PURCHASED };

export const CREDIT_PRICE_CENTS = 100;

/** A uuid derived from a name: the same completion always gets the same event id. */
export function derivedEventId(name: string): string {
  const h = createHash('sha256').update(name).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${((parseInt(h[16], 16) & 3) | 8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** The same Idempotency-Key is the same checkout: retried requests charge and credit once. */
export const checkoutIdFor = (orgId: string, idempotencyKey?: string): string =>
  idempotencyKey ? derivedEventId(`checkout:${orgId}:${idempotencyKey}`) : randomUUID();

export interface CreditsCheckoutStartedData {
  checkout_id: string;
  credits: number;
  amount_cents: number;
  provider: string;
  /** The provider's idempotency key for this checkout's charge: what a lookup asks by. */
  provider_key: string;
}

export interface CreditsPurchasedData {
  checkout_id: string;
  credits: number;
  provider: string;
  provider_reference: string;
}

export interface CreditsCheckoutFailedData {
  checkout_id: string;
  status: 'declined' | 'failed';
  reason: string;
}

/** A completed purchase: credits are a positive integer. */
export function purchaseCredits(input: { checkoutId: string; credits: number; provider: string; providerReference: string }) {
  if (!Number.isInteger(input.credits) || input.credits < 1) throw new DomainError('validation_failed', 'credits must be a positive integer');
  const data: CreditsPurchasedData = { checkout_id: input.checkoutId, credits: input.credits, provider: input.provider, provider_reference: input.providerReference };
  return [{ event_id: derivedEventId(`${input.checkoutId}:purchased`), type: NOTARY_CREDITS_PURCHASED, data }];
}

/**
 * A declined or failed purchase: recorded, adds no credits. `reconciled`: what the reconciliation
 * learned of a checkout left without an outcome (a crash between the charge and its record, or an
 * outcome that stayed unknown), including one never charged (`settlement_not_started`); it has an
 * event id of its own, apart from the request's failure record.
 */
export function failCheckout(input: { checkoutId: string; status: 'declined' | 'failed'; reason: string; reconciled?: boolean }) {
  const data: CreditsCheckoutFailedData = { checkout_id: input.checkoutId, status: input.status, reason: input.reason };
  return [{ event_id: derivedEventId(`${input.checkoutId}:${input.reconciled ? 'reconciled' : 'failed'}:${input.status}`), type: NOTARY_CREDITS_CHECKOUT_FAILED, data }];
}

/** A checkout about to be charged; starting the same checkout again is a replay. */
export function startCheckout(input: { checkoutId: string; credits: number; amountCents: number; provider: string; providerKey: string }) {
  const data: CreditsCheckoutStartedData = { checkout_id: input.checkoutId, credits: input.credits, amount_cents: input.amountCents, provider: input.provider, provider_key: input.providerKey };
  return [{ event_id: derivedEventId(`${input.checkoutId}:started`), type: NOTARY_CREDITS_CHECKOUT_STARTED, data }];
}
