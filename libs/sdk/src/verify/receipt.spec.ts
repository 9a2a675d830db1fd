import { canonicalJson, sha256Hex } from '@app/crypto';
import { ServerSigner } from '../../test/server-signer';
import { verifyReceipt, verifySignedRecord } from './receipt';

const payload = (overrides: Record<string, unknown> = {}) => ({
  transaction_id: 'txn_' + 'a'.repeat(32),
  authorization_id: 'auth_' + 'b'.repeat(32),
  organization_id: 'org_1',
  amount_cents: 1250,
  currency: 'USD',
  merchant_id: 'm_42',
  provider: 'sandbox',
  provider_reference: 'sbx_123',
  policy_hash: `sha256:${sha256Hex('policy')}`,
  timeline_last_hash: `sha256:${sha256Hex('timeline')}`,
  issuer: 'Sigil test authority',
  issued_at: '2025-02-01T00:00:00.000Z',
  ...overrides,
});

describe('verifyReceipt', () => {
  it('accepts a genuine payment_receipt.v1', () => {
    const server = new ServerSigner();
    const receipt = server.receipt(payload());
    expect(verifyReceipt(receipt, server.keysDocument())).toEqual({
      valid: true,
      key_id: server.ring.active().key_id,
      key_status: 'active',
      warnings: [],
      schema_version: 'payment_receipt.v1',
      receipt_hash: receipt.receipt_hash,
      issued_at: '2025-02-01T00:00:00.000Z',
    });
  });

  it('refuses a tampered payload, a receipt_hash that does not match, and a bad signature', () => {
    const server = new ServerSigner();
    const keys = server.keysDocument();
    const receipt = server.receipt(payload());
    expect(verifyReceipt({ ...receipt, payload: { ...receipt.payload, amount_cents: 125000 } }, keys)).toMatchObject({ valid: false, reason: 'receipt_hash_mismatch' });
    // Payload and hash changed together: the signature no longer matches.
    const forged = payload({ amount_cents: 125000 });
    const forgedHash = `sha256:${sha256Hex(canonicalJson(forged))}`;
    expect(verifyReceipt({ ...receipt, payload: forged, receipt_hash: forgedHash }, keys)).toMatchObject({ valid: false, reason: 'signature_invalid' });
    expect(verifyReceipt({ ...receipt, receipt_hash: receipt.receipt_hash.toUpperCase() }, keys)).toMatchObject({ valid: false, reason: 'receipt_hash_mismatch' });
    expect(verifyReceipt({ ...receipt, signature: { ...receipt.signature, key_id: 'nope' } }, keys)).toMatchObject({ valid: false, reason: 'unknown_key' });
    expect(verifyReceipt({ ...receipt, schema_version: 'payment_receipt.v2' }, keys)).toMatchObject({ valid: false, reason: 'unsupported_schema_version' });
    for (const bad of [null, {}, { ...receipt, payload: [] }, { ...receipt, receipt_hash: undefined }, { ...receipt, signature: null }]) {
      expect(verifyReceipt(bad, keys)).toMatchObject({ valid: false, reason: 'malformed' });
    }
  });

  it('judges the key status at issued_at: revoked later verifies with a warning, signed after revocation fails', () => {
    const server = new ServerSigner(new Date('2025-01-01T00:00:00Z'));
    const first = server.ring.active().key_id;
    const early = server.receipt(payload({ issued_at: '2025-02-01T00:00:00.000Z' }));
    server.ring.revoke(first, new Date('2025-03-01T00:00:00Z'));
    const late = server.receipt(payload({ issued_at: '2025-03-02T00:00:00.000Z' }), first);
    const keys = server.keysDocument();
    expect(verifyReceipt(early, keys)).toMatchObject({ valid: true, key_status: 'revoked', warnings: ['signed_by_revoked_key_before_revocation'] });
    expect(verifyReceipt(late, keys)).toMatchObject({ valid: false, reason: 'key_revoked', key_status: 'revoked' });
    const undated = server.receipt(payload({ issued_at: undefined }));
    expect(verifyReceipt(undated, keys)).toMatchObject({ valid: false, reason: 'invalid_signing_time' });
  });

  it('verifies a signed decision record (payment_decision.v1, record_hash, decided_at) the same way', () => {
    const server = new ServerSigner();
    const { receipt_hash, ...rest } = server.receipt({ decision: 'blocked', reason_code: 'MERCHANT_BLOCKED', decided_at: '2025-02-01T00:00:00.000Z' });
    const record = { ...rest, schema_version: 'payment_decision.v1', record_hash: receipt_hash };
    const asDecision = { expectedSchema: 'payment_decision.v1' } as const;
    expect(verifyReceipt(record, server.keysDocument(), asDecision)).toMatchObject({ valid: true, issued_at: '2025-02-01T00:00:00.000Z' });
    expect(verifySignedRecord(record, server.keysDocument())).toMatchObject({ valid: true, schema_version: 'payment_decision.v1' });
    expect(verifyReceipt({ ...record, payload: { ...record.payload, decision: 'authorized' } }, server.keysDocument(), asDecision)).toMatchObject({ valid: false, reason: 'receipt_hash_mismatch' });
  });

  it('takes only a payment_receipt.v1 as a receipt by default: a validly signed decision, review or anchor is unexpected_schema_version', () => {
    const server = new ServerSigner();
    const keys = server.keysDocument();
    const at = '2025-02-01T00:00:00.000Z';
    const kinds = [
      ['payment_decision.v1', { decision: 'blocked', decided_at: at }],
      ['payment_review.v1', { review: 'approved', reviewed_at: at }],
      ['payment_timeline_anchor.v1', { terminal_status: 'settled', anchored_at: at }],
    ] as const;
    for (const [schema, body] of kinds) {
      const { receipt_hash, ...rest } = server.receipt(body);
      const record = { ...rest, schema_version: schema, record_hash: receipt_hash };
      expect(verifyReceipt(record, keys)).toMatchObject({ valid: false, reason: 'unexpected_schema_version', schema_version: schema });
      expect(verifyReceipt(record, keys, { expectedSchema: schema })).toMatchObject({ valid: true, issued_at: at });
      expect(verifyReceipt(record, keys, { expectedSchema: ['payment_receipt.v1', schema] })).toMatchObject({ valid: true });
      expect(verifySignedRecord(record, keys)).toMatchObject({ valid: true, schema_version: schema });
    }
    const receipt = server.receipt(payload());
    expect(verifyReceipt(receipt, keys, { expectedSchema: 'payment_decision.v1' })).toMatchObject({ valid: false, reason: 'unexpected_schema_version' });
  });

  it('judges the key at the signing time of the record\u2019s own kind, never another kind\u2019s field', () => {
    const server = new ServerSigner();
    // A decision carrying an issued_at (a receipt's field) but no decided_at has no signing time.
    const { receipt_hash, ...rest } = server.receipt({ decision: 'blocked', issued_at: '2025-02-01T00:00:00.000Z' });
    const record = { ...rest, schema_version: 'payment_decision.v1', record_hash: receipt_hash };
    expect(verifySignedRecord(record, server.keysDocument())).toMatchObject({ valid: false, reason: 'invalid_signing_time', issued_at: null });
  });
});
