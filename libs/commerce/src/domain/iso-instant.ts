import { isStorableTime } from '@app/core';

/**
 * Strict ISO-8601 date-times that name an instant: a calendar date, `T`, a time (hh:mm, seconds
 * and up to 9 fraction digits optional) and a zone, `Z` or ±hh:mm (extended format, as RFC 3339
 * has it). A date alone, a local time without a zone, or an impossible date (2026-02-30,
 * month 13, hour 24, a leap second) is refused rather than guessed at: an authorization window
 * must mean the same instant to every reader. Date.parse is not used: it accepts far more.
 */
const ISO_INSTANT = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(?:(Z)|([+-])(\d{2}):(\d{2}))$/;

const isLeap = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
export const daysInMonth = (year: number, month: number): number =>
  [31, isLeap(year) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1];

/** Milliseconds since the epoch (fractions below a millisecond truncated), or null if not a strict instant. */
export function parseIsoInstant(value: unknown): number | null {
  if (typeof value !== 'string') return null;
  const m = ISO_INSTANT.exec(value);
  if (!m) return null;
  const [year, month, day, hour, minute] = [m[1], m[2], m[3], m[4], m[5]].map(Number);
  const second = m[6] === undefined ? 0 : Number(m[6]);
  const millis = m[7] === undefined ? 0 : Number(m[7].padEnd(3, '0').slice(0, 3));
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  if (hour > 23 || minute > 59 || second > 59) return null;
  let offsetMinutes = 0;
  if (!m[8]) {
    const oh = Number(m[10]);
    const om = Number(m[11]);
    if (oh > 23 || om > 59) return null;
    offsetMinutes = (m[9] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  d.setUTCHours(hour, minute, second, millis);
  return d.getTime() - offsetMinutes * 60_000;
}

export const isIsoInstant = (value: unknown): value is string => parseIsoInstant(value) !== null;

/**
 * A listing's time bound (`from`, `to`): an ISO-8601 date or date-time as Date.parse reads it, on
 * a real calendar day, at an instant of years 0001..9999; answered as that instant's
 * `toISOString()`, the one form PostgreSQL reads the same way. Null otherwise: Date.parse rolls
 * 2026-02-30 over to March and reads year 0000, which PostgreSQL refuses (a 500 before this).
 */
export function parseListingBound(value: string): string | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})/.exec(value);
  const ms = Date.parse(value);
  if (!m || Number.isNaN(ms)) return null;
  const [year, month, day] = [m[1], m[2], m[3]].map(Number);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  return isStorableTime(ms) ? new Date(ms).toISOString() : null;
}

/** A strict instant (isIsoInstant) that PostgreSQL stores and reads back (isStorableTime: UTC years 1..9999). */
export const isStorableInstant = (value: unknown): value is string => {
  const at = parseIsoInstant(value);
  return at !== null && isStorableTime(at);
};
