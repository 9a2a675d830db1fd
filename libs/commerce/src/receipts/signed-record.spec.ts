import { specAuthority } from '../transactions/transaction-spec-fixtures';
import { ANCHOR_SCHEMA, DECISION_SCHEMA, RECEIPT_SCHEMA, REVIEW_SCHEMA, SignatureCheck, signRecord, SignedRecordSchema, verifyRecord } from './signed-record';

describe('signed records: the signing time is the field of the record’s own kind', () => {
  const seen: Date[] = [];
  const check: SignatureCheck = (_keyId, _message, _signature, signedAt) => {
    seen.push(signedAt);
    return Number.isNaN(signedAt.getTime()) ? { valid: false, reason: 'invalid_signing_time' } : { valid: true };
  };
  const own: Record<SignedRecordSchema, string> = { [RECEIPT_SCHEMA]: 'issued_at', [DECISION_SCHEMA]: 'decided_at', [REVIEW_SCHEMA]: 'reviewed_at', [ANCHOR_SCHEMA]: 'anchored_at' };

  it.each(Object.entries(own))('%s is judged at its %s', (schema, field) => {
    seen.length = 0;
    // Every kind's field is present, each with another time: only the record's own one counts.
    const times = { issued_at: '2026-01-01T00:00:00.000Z', decided_at: '2026-02-01T00:00:00.000Z', reviewed_at: '2026-03-01T00:00:00.000Z', anchored_at: '2026-04-01T00:00:00.000Z' };
    const record = signRecord(schema as SignedRecordSchema, { transaction_id: 'txn_1', ...times }, specAuthority.sign);
    expect(verifyRecord(record, check)).toMatchObject({ valid: true });
    expect(seen).toEqual([new Date(times[field as keyof typeof times])]);
  });

  it('a record without its own kind’s time has no signing time, even when it carries another kind’s', () => {
    const review = signRecord(REVIEW_SCHEMA, { transaction_id: 'txn_1', issued_at: '2026-01-01T00:00:00.000Z' }, specAuthority.sign);
    expect(verifyRecord(review, check)).toMatchObject({ valid: false, reason: 'invalid_signing_time' });
  });
});
