import { AppError } from '@app/core';

/**
 * Keyset-pagination cursors: the last item's (created_at, id), opaque to clients. Pages stay
 * stable while items are added, because the next page starts strictly after that pair.
 */
export function encodePageCursor(createdAt: Date | string, id: string): string {
  return Buffer.from(JSON.stringify([new Date(createdAt).toISOString(), id])).toString('base64url');
}

/**
 * Only the form encodePageCursor writes (toISOString, years 0001-9999): `Date.parse` alone also
 * takes `1`, `Tuesday 5`, year 0 or six-digit years, which PostgreSQL refuses (a 500, not a 400).
 */
const ISSUED_AT = /^(?!0000)\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const issuedAt = (at: unknown): at is string => typeof at === 'string' && ISSUED_AT.test(at) && new Date(at).toISOString() === at;

/** The pair a cursor carries; 400 `validation_failed` (field `cursor`) when this service did not issue it. */
export function decodePageCursor(cursor: string): { at: string; id: string } {
  try {
    const [at, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as [unknown, unknown];
    // PostgreSQL text cannot hold U+0000 either.
    if (issuedAt(at) && typeof id === 'string' && id.length <= 64 && !id.includes('\u0000')) return { at, id };
  } catch {
    /* falls through */
  }
  throw new AppError('validation_failed', 'cursor is not one this service issued', 400, [{ field: 'cursor', message: 'invalid cursor' }]);
}
