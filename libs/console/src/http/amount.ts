import { isCurrency, minorUnits } from '@app/commerce';
import { AppError } from '@app/core';

/** "250" or "250.5" in the currency's major unit → minor units; '' → undefined (approve the amount asked). */
export function parseAmount(text: string, currency: string): number | undefined {
  const value = text.trim();
  if (value === '') return undefined;
  if (!isCurrency(currency)) throw new AppError('validation_failed', 'The form names no known currency; reload the page', 400, [{ field: 'currency', message: 'must be an ISO 4217 code' }]);
  const digits = minorUnits(currency);
  const m = /^(\d{1,15})(?:\.(\d+))?$/.exec(value);
  if (!m || (m[2] ?? '').length > digits) {
    throw new AppError('validation_failed', `The amount must be a number in ${currency} with at most ${digits} decimals, like ${digits ? `12.${'5'.padEnd(digits, '0')}` : '12'}`, 400, [{ field: 'amount', message: 'must be a positive amount' }]);
  }
  const cents = Number(m[1]) * 10 ** digits + Number((m[2] ?? '').padEnd(digits, '0') || 0);
  if (!Number.isSafeInteger(cents) || cents <= 0) throw new AppError('validation_failed', 'The amount must be above zero', 400, [{ field: 'amount', message: 'must be above zero' }]);
  return cents;
}
