import { AppError } from '@app/core';

/**
 * Keyset-pagination cursors: the last item's (created_at, id), opaque to clients. Pages stay
 * stable while items are added, because the next page starts strictly after that pair.
 */
export function encodePageCursor(createdAt: Date | string, id: string): string {
  return Buffer.from(JSON.stringify([new Date(createdAt).toISOString(), id])).toString('base64url');
}

/** The pair a cursor carries; 400 `validation_failed` (field `cursor`) when this service did not issue it. */
export function decodePageCursor(cursor: string): { at: string; id: string } {
  try {
    const [at, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as [unknown, unknown];
    if (typeof at === 'string' && !Number.isNaN(Date.parse(at)) && typeof id === 'string' && id.length <= 64) return { at, id };
  } catch {
    /* falls through */
  }
  throw new AppError('validation_failed', 'cursor is not one this service issued', 400, [{ field: 'cursor', message: 'invalid cursor' }]);
}
