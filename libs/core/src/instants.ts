/** The first and last instants whose UTC year is 1..9999 (`Date.UTC` would read year 1 as 1901). */
const FIRST_STORABLE = Date.parse('0001-01-01T00:00:00.000Z');
const LAST_STORABLE = Date.parse('9999-12-31T23:59:59.999Z');

/**
 * Whether an instant (ms since the epoch) is one PostgreSQL stores and reads back as this service
 * writes instants: UTC years 1..9999. Year 0 (`0000-…`, or `0001-01-01T00:30:00+01:00`, year 0 in
 * UTC) is refused, or read back as a BC date the embedded driver cannot parse; past 9999 there is
 * no four-digit form. NaN is not storable.
 */
export const isStorableTime = (ms: number): boolean => ms >= FIRST_STORABLE && ms <= LAST_STORABLE;
