import { daysInMonth, isIsoInstant, parseIsoInstant, parseListingBound } from './iso-instant';

describe('strict ISO-8601 instants', () => {
  it('reads date-times with a zone, to the millisecond', () => {
    const cases: Array<[string, string]> = [
      ['2026-11-21T10:00:00Z', '2026-11-21T10:00:00.000Z'],
      ['2026-11-21T10:00Z', '2026-11-21T10:00:00.000Z'],
      ['2026-11-21T10:00:00.5Z', '2026-11-21T10:00:00.500Z'],
      ['2026-11-21T10:00:00.123456789Z', '2026-11-21T10:00:00.123Z'],
      ['2026-11-21T10:00:00+05:30', '2026-11-21T04:30:00.000Z'],
      ['2026-11-21T01:00:00-08:00', '2026-11-21T09:00:00.000Z'],
      ['2026-11-21T00:00:00-00:00', '2026-11-21T00:00:00.000Z'],
      ['2028-02-29T23:59:59Z', '2028-02-29T23:59:59.000Z'],
      ['2000-02-29T00:00:00Z', '2000-02-29T00:00:00.000Z'],
      ['0099-01-01T00:00:00Z', '0099-01-01T00:00:00.000Z'],
      ['9999-12-31T23:59:59.999Z', '9999-12-31T23:59:59.999Z'],
    ];
    for (const [text, iso] of cases) expect([text, new Date(parseIsoInstant(text)!).toISOString()]).toEqual([text, iso]);
  });

  it('refuses impossible dates and times, missing zones and other formats', () => {
    for (const bad of [
      '2026-13-01T00:00:00Z',
      '2026-00-01T00:00:00Z',
      '2026-02-30T00:00:00Z',
      '2026-02-29T00:00:00Z',
      '1900-02-29T00:00:00Z',
      '2026-04-31T00:00:00Z',
      '2026-01-00T00:00:00Z',
      '2026-01-32T00:00:00Z',
      '2026-01-01T24:00:00Z',
      '2026-01-01T23:60:00Z',
      '2026-01-01T23:59:60Z',
      '2026-01-01T00:00:00+24:00',
      '2026-01-01T00:00:00+05:60',
      '2026-01-01T00:00:00+0530',
      '2026-01-01T00:00:00+05',
      '2026-01-01T00:00:00',
      '2026-01-01',
      '2026-01-01 00:00:00Z',
      '2026-01-01t00:00:00z',
      '2026-1-1T00:00:00Z',
      '20260101T000000Z',
      '2026-01-01T00:00:00.Z',
      '2026-01-01T00:00:00.1234567890Z',
      '2026-01-01T00:00:00,5Z',
      '+2026-01-01T00:00:00Z',
      ' 2026-01-01T00:00:00Z',
      '2026-01-01T00:00:00Z ',
      'Sat, 21 Nov 2026 10:00:00 GMT',
      'tomorrow',
      '',
      '１２３４-01-01T00:00:00Z',
    ]) {
      expect([bad, parseIsoInstant(bad)]).toEqual([bad, null]);
      expect(isIsoInstant(bad)).toBe(false);
    }
    for (const notString of [null, undefined, 0, 1767225600000, {}, [], new Date()]) expect(parseIsoInstant(notString)).toBeNull();
  });

  it('knows the length of every month, leap years included', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12].map((m) => daysInMonth(2026, m))).toEqual([31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]);
    expect([2024, 2000, 1900, 2100].map((y) => daysInMonth(y, 2))).toEqual([29, 29, 28, 28]);
  });

  it('reads a listing bound as its canonical instant, and refuses days PostgreSQL would refuse', () => {
    const cases: Array<[string, string | null]> = [
      ['2024-02-29', '2024-02-29T00:00:00.000Z'],
      ['2026-11-21T10:00:00+05:30', '2026-11-21T04:30:00.000Z'],
      ['2026-11-21T10:00:00.250Z', '2026-11-21T10:00:00.250Z'],
      ['2026-02-30', null],
      ['2025-02-29T10:00:00Z', null],
      ['2026-13-01', null],
      ['2026-00-10', null],
      ['0000-01-01', null],
      ['0001-01-01T00:00:00+01:00', null],
      ['9999-12-31T23:00:00-14:00', null],
      ['yesterday', null],
      ['March 7 2026', null],
    ];
    for (const [text, iso] of cases) expect([text, parseListingBound(text)]).toEqual([text, iso]);
  });
});
