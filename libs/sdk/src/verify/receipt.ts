import { canonicalJson } from '../encoding/canonical-json';
import { sha256Hex } from '../encoding/hashing';
import { SignatureFailure, SigningKeyStatus, verifyDigestSignature } from './keys';

export const RECEIPT_SCHEMA_VERSION = 'payment_receipt.v1';
export const DECISION_SCHEMA_VERSION = 'payment_decision.v1';
export const REVIEW_SCHEMA_VERSION = 'payment_review.v1';
/** The signed anchor that ends a terminal transaction timeline (the data of its `timeline.anchored` event). */
export const TIMELINE_ANCHOR_SCHEMA_VERSION = 'payment_timeline_anchor.v1';

/** GET /api/cdp/receipts/{transaction_id}, shaped like a SignedManifest (DESIGN "Receipt document"). */
export interface PaymentReceipt {
  schema_version: typeof RECEIPT_SCHEMA_VERSION;
  payload: Record<string, unknown>;
  /** `sha256:<hex>` of the payload's RFC 8785 form. */
  receipt_hash: string;
  signature: { alg: string; key_id: string; value: string };
}

/** The signed record of an authorization decision, of a person's review of one, or a timeline's anchor: the same shape, with `record_hash`. */
export interface PaymentDecisionRecord {
  schema_version: typeof DECISION_SCHEMA_VERSION | typeof REVIEW_SCHEMA_VERSION | typeof TIMELINE_ANCHOR_SCHEMA_VERSION;
  payload: Record<string, unknown>;
  record_hash: string;
  signature: { alg: string; key_id: string; value: string };
}

/** Every kind of signed commerce record `verifyReceipt` knows. */
export type SignedRecordSchemaVersion = typeof RECEIPT_SCHEMA_VERSION | typeof DECISION_SCHEMA_VERSION | typeof REVIEW_SCHEMA_VERSION | typeof TIMELINE_ANCHOR_SCHEMA_VERSION;
export const SIGNED_RECORD_SCHEMA_VERSIONS: readonly SignedRecordSchemaVersion[] = [RECEIPT_SCHEMA_VERSION, DECISION_SCHEMA_VERSION, REVIEW_SCHEMA_VERSION, TIMELINE_ANCHOR_SCHEMA_VERSION];

export interface VerifyReceiptOptions {
  /**
   * The kind(s) of record the caller expects: another, though validly signed, is
   * `unexpected_schema_version` (a signed decision or review is no receipt). Default
   * `payment_receipt.v1`; `'any'` takes every kind (what `verifySignedRecord` does).
   */
  expectedSchema?: SignedRecordSchemaVersion | readonly SignedRecordSchemaVersion[] | 'any';
}

export type ReceiptFailure = SignatureFailure | 'malformed' | 'unsupported_schema_version' | 'unexpected_schema_version' | 'receipt_hash_mismatch';

export interface ReceiptVerification {
  valid: boolean;
  reason?: ReceiptFailure;
  key_status?: SigningKeyStatus;
  key_id: string | null;
  warnings: string[];
  schema_version: string | null;
  /** The hash recomputed from the payload. */
  receipt_hash: string | null;
  /** The signing time the key's status was judged at (`issued_at`, or `decided_at` for a decision). */
  issued_at: string | null;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Each kind's signing time: the payload field the key's status is judged at (never another kind's). */
const SIGNED_AT: Readonly<Record<SignedRecordSchemaVersion, string>> = {
  [RECEIPT_SCHEMA_VERSION]: 'issued_at',
  [DECISION_SCHEMA_VERSION]: 'decided_at',
  [REVIEW_SCHEMA_VERSION]: 'reviewed_at',
  [TIMELINE_ANCHOR_SCHEMA_VERSION]: 'anchored_at',
};

/**
 * Verifies a payment receipt offline: `receipt_hash` must be the SHA-256 of the payload's JCS form,
 * and the signature is over that digest's hex, as for certificates. The key's status is judged at
 * the payload's `issued_at`. A signed decision record (payment_decision.v1, `record_hash`,
 * `decided_at`), a person's signed review (payment_review.v1, `record_hash`, `reviewed_at`) and a
 * timeline's anchor (payment_timeline_anchor.v1, `record_hash`, `anchored_at`) verify the same way
 * when asked for (`expectedSchema`, or `verifySignedRecord`): by default only a payment_receipt.v1
 * is a valid receipt, so a signed decision or review is never taken for proof of payment.
 * Never throws.
 */
export function verifyReceipt(receipt: unknown, keysDocument: unknown, options: VerifyReceiptOptions = {}): ReceiptVerification {
  const result: ReceiptVerification = { valid: false, key_id: null, warnings: [], schema_version: null, receipt_hash: null, issued_at: null };
  const fail = (reason: ReceiptFailure): ReceiptVerification => ({ ...result, valid: false, reason });
  if (!isObject(receipt)) return fail('malformed');
  result.schema_version = typeof receipt.schema_version === 'string' ? receipt.schema_version : null;
  const expected = options.expectedSchema ?? RECEIPT_SCHEMA_VERSION;
  const accepted: readonly string[] = expected === 'any' ? SIGNED_RECORD_SCHEMA_VERSIONS : typeof expected === 'string' ? [expected] : expected;
  const isReview = receipt.schema_version === REVIEW_SCHEMA_VERSION;
  const isAnchor = receipt.schema_version === TIMELINE_ANCHOR_SCHEMA_VERSION;
  const isDecision = receipt.schema_version === DECISION_SCHEMA_VERSION || isReview || isAnchor;
  const stated = isDecision ? receipt.record_hash : receipt.receipt_hash;
  const { payload, signature } = receipt;
  if (!isObject(payload) || !isObject(signature) || typeof signature.key_id !== 'string' || typeof stated !== 'string') return fail('malformed');
  result.key_id = signature.key_id;
  if (result.schema_version !== RECEIPT_SCHEMA_VERSION && !isDecision) return fail('unsupported_schema_version');
  const signedAt = payload[SIGNED_AT[result.schema_version as SignedRecordSchemaVersion]];
  result.issued_at = typeof signedAt === 'string' ? signedAt : null;
  if (!accepted.includes(result.schema_version!)) return fail('unexpected_schema_version');
  if (signature.alg !== 'Ed25519') return fail('unsupported_algorithm');
  let digest: string;
  try {
    digest = sha256Hex(canonicalJson(payload));
  } catch {
    return fail('malformed');
  }
  result.receipt_hash = `sha256:${digest}`;
  if (stated !== result.receipt_hash) return fail('receipt_hash_mismatch');
  const verdict = verifyDigestSignature(keysDocument, signature.key_id, digest, signature.value, signedAt);
  if (verdict.key) result.key_status = verdict.key.status;
  if (!verdict.valid) return fail(verdict.reason);
  result.warnings.push(...verdict.warnings);
  return { ...result, valid: true };
}

/** Verifies any signed commerce record (receipt, decision, review, timeline anchor): `verifyReceipt` with `expectedSchema: 'any'`. Check `schema_version` before relying on what it proves. */
export const verifySignedRecord = (record: unknown, keysDocument: unknown): ReceiptVerification => verifyReceipt(record, keysDocument, { expectedSchema: 'any' });
