import { AppError } from '@app/core';

/**
 * Keyset-pagination cursors: the last item's (created_at, id), opaque to clients. Pages stay
 * stable while items are added, because the next page starts strictly after that pair.
 */
export function encodePageCursor(createdAt: Date | string, id: string): string {
  return Buffer.from(JSON.stringify([new Date(createdAt).toISOString(), id])).toString('base64url');
}

/** What encodePageCursor writes: `Date#toISOString()` of a year 0001..9999 (PostgreSQL reads no year 0000). */
const ISSUED_AT = /^(?!0000)\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
/** The ids this service pages by (txn_…, dlv_…, uuids): printable ASCII, so never U+0000, which PostgreSQL text cannot hold. */
const ISSUED_ID = /^[\x21-\x7e]{1,64}$/;

/**
 * The pair a cursor carries; 400 `validation_failed` (field `cursor`) when this service did not
 * issue it. Only exactly what encodePageCursor writes is taken back: a time Date.parse accepts
 * but PostgreSQL refuses ("0", "2020-02-30", "March 7"), or an id holding U+0000, used to reach
 * the query and answer 500.
 */
export function decodePageCursor(cursor: string): { at: string; id: string } {
  try {
    const [at, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as [unknown, unknown];
    if (typeof at === 'string' && ISSUED_AT.test(at) && new Date(at).toISOString() === at && typeof id === 'string' && ISSUED_ID.test(id)) return { at, id };
  } catch {
    /* falls through */
  }
  throw new AppError('validation_failed', 'cursor is not one this service issued', 400, [{ field: 'cursor', message: 'invalid cursor' }]);
}
