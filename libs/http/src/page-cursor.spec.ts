import { decodePageCursor, encodePageCursor } from './page-cursor';

const forge = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

describe('page cursors', () => {
  it('decodes what it encoded', () => {
    expect(decodePageCursor(encodePageCursor('2026-11-25T10:00:00Z', 'dlv_1'))).toEqual({ at: '2026-11-25T10:00:00.000Z', id: 'dlv_1' });
    expect(decodePageCursor(encodePageCursor(new Date('0001-01-01T00:00:00.000Z'), 'x'))).toEqual({ at: '0001-01-01T00:00:00.000Z', id: 'x' });
  });

  // Each of these passed the check and reached PostgreSQL, which refused it: a 500, not a 400.
  it.each([
    ['a date JavaScript reads but PostgreSQL does not', ['1', 'x']],
    ['a weekday and a number', ['Tuesday 5', 'x']],
    ['a six-digit year', ['+275760-09-13T00:00:00.000Z', 'x']],
    ['year zero', ['0000-01-01T00:00:00.000Z', 'x']],
    ['an id with U+0000', ['2026-11-25T10:00:00.000Z', 'a\u0000b']],
  ])('refuses a forged cursor with 400 validation_failed: %s', (_what, pair) => {
    expect(() => decodePageCursor(forge(pair))).toThrow(expect.objectContaining({ code: 'validation_failed', status: 400 }));
  });
});
