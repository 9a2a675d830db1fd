import { AppError } from '@app/core';
import { decodePageCursor, encodePageCursor } from './page-cursor';

describe('page cursors', () => {
  const forged = (pair: unknown) => Buffer.from(JSON.stringify(pair)).toString('base64url');

  it('takes back what it issued', () => {
    const c = encodePageCursor(new Date('2026-11-21T10:00:00.123Z'), 'txn_0123456789abcdef0123456789abcdef');
    expect(decodePageCursor(c)).toEqual({ at: '2026-11-21T10:00:00.123Z', id: 'txn_0123456789abcdef0123456789abcdef' });
    expect(decodePageCursor(encodePageCursor('2026-11-21 10:00:00+00', 'b4a8a4c2-1b0e-4f3e-9d55-6a4f1f0e2d11')).at).toBe('2026-11-21T10:00:00.000Z');
    expect(decodePageCursor(encodePageCursor(new Date('0001-01-01T00:00:00.000Z'), 'x'))).toEqual({ at: '0001-01-01T00:00:00.000Z', id: 'x' });
  });

  it('refuses anything else with 400 validation_failed, before a query sees it', () => {
    for (const c of [
      'not base64 json',
      forged(['0', 'x']),
      forged(['1', 'x']),
      forged(['Tuesday 5', 'x']),
      forged(['+275760-09-13T00:00:00.000Z', 'x']),
      forged(['March 7', 'x']),
      forged(['2026-02-30T00:00:00.000Z', 'x']),
      forged(['0000-01-01T00:00:00.000Z', 'x']),
      forged(['2026-11-21T10:00:00Z', 'x']),
      forged(['2026-11-21T10:00:00.000Z', 'a\u0000b']),
      forged(['2026-11-21T10:00:00.000Z', '']),
      forged(['2026-11-21T10:00:00.000Z', 'x'.repeat(65)]),
      forged(['2026-11-21T10:00:00.000Z', 7]),
    ]) {
      let thrown: unknown;
      try {
        decodePageCursor(c);
      } catch (err) {
        thrown = err;
      }
      expect([c, thrown instanceof AppError && thrown.status, thrown instanceof AppError && thrown.code]).toEqual([c, 400, 'validation_failed']);
    }
  });
});
