import { canonicalJson, fromBase64Url, sha256Hex, toBase64Url } from '@app/crypto';

/**
 * Signed commerce records, shaped like the notary's SignedManifest: the receipt of a settled
 * payment (payment_receipt.v1, DESIGN "Receipt document") and the record of a decision
 * (payment_decision.v1), which lets a refusal be proven as well as a payment, and a person's
 * review of an escalated one (payment_review.v1).
 * The hash is SHA-256 of the JCS bytes of `payload`; the signature covers the ASCII of its
 * lowercase hex, exactly as for certificates, so one verifier serves them all (and the anchor
 * that ends a terminal timeline, payment_timeline_anchor.v1).
 */
export const RECEIPT_SCHEMA = 'payment_receipt.v1';
export const DECISION_SCHEMA = 'payment_decision.v1';
/** A person's review of an escalated authorization (approved or rejected), signed like the policy's decision. */
export const REVIEW_SCHEMA = 'payment_review.v1';
/** The anchor that ends a terminal timeline: the hash, revision and status of its last event, signed (domain/timeline-anchor.ts). */
export const ANCHOR_SCHEMA = 'payment_timeline_anchor.v1';
export type SignedRecordSchema = typeof RECEIPT_SCHEMA | typeof DECISION_SCHEMA | typeof REVIEW_SCHEMA | typeof ANCHOR_SCHEMA;
const SCHEMAS: readonly string[] = [RECEIPT_SCHEMA, DECISION_SCHEMA, REVIEW_SCHEMA, ANCHOR_SCHEMA];
/** The payload field that is each kind's signing time (the key's status is judged then); never another kind's. */
export const SIGNED_AT: Readonly<Record<SignedRecordSchema, string>> = {
  [RECEIPT_SCHEMA]: 'issued_at',
  [DECISION_SCHEMA]: 'decided_at',
  [REVIEW_SCHEMA]: 'reviewed_at',
  [ANCHOR_SCHEMA]: 'anchored_at',
};

export interface SignedRecord<P extends Record<string, unknown> = Record<string, unknown>> {
  schema_version: SignedRecordSchema;
  payload: P;
  /** `sha256:<hex>` of the JCS bytes of payload (`receipt_hash` on receipts, `record_hash` on decisions). */
  receipt_hash?: string;
  record_hash?: string;
  signature: { alg: 'Ed25519'; key_id: string; value: string };
}

export type Signer = (message: Uint8Array) => { key_id: string; signature: Uint8Array };

export function payloadDigest(payload: unknown): string {
  return sha256Hex(canonicalJson(payload));
}

export function signRecord<P extends Record<string, unknown>>(schema: SignedRecordSchema, payload: P, sign: Signer): SignedRecord<P> {
  const digest = payloadDigest(payload);
  const { key_id, signature } = sign(Buffer.from(digest, 'ascii'));
  const hashField = schema === RECEIPT_SCHEMA ? { receipt_hash: `sha256:${digest}` } : { record_hash: `sha256:${digest}` };
  return { schema_version: schema, payload, ...hashField, signature: { alg: 'Ed25519', key_id, value: toBase64Url(Buffer.from(signature)) } };
}

export type RecordVerdict =
  | { valid: true; key_id: string; warning?: string }
  | { valid: false; reason: 'malformed' | 'unsupported_schema' | 'hash_mismatch' | 'unknown_key' | 'signature_invalid' | 'key_revoked' | 'signed_after_retirement' | 'invalid_signing_time'; key_id: string | null };

/** Checks a key's signature on a message at a signing time, honouring the key's status. */
export type SignatureCheck = (
  keyId: string,
  message: Uint8Array,
  signature: Uint8Array,
  signedAt: Date,
) => { valid: true; warning?: string } | { valid: false; reason: Exclude<Extract<RecordVerdict, { valid: false }>['reason'], 'malformed' | 'unsupported_schema' | 'hash_mismatch'> };

/** Verifies a signed record: its hash against its payload, then the signature at its signing time. */
export function verifyRecord(doc: unknown, check: SignatureCheck): RecordVerdict {
  if (!isRecordShape(doc)) return { valid: false, reason: 'malformed', key_id: null };
  const keyId = doc.signature.key_id;
  if (!SCHEMAS.includes(doc.schema_version)) return { valid: false, reason: 'unsupported_schema', key_id: keyId };
  const stated = doc.schema_version === RECEIPT_SCHEMA ? doc.receipt_hash : doc.record_hash;
  let digest: string;
  try {
    digest = payloadDigest(doc.payload);
  } catch {
    return { valid: false, reason: 'malformed', key_id: keyId };
  }
  if (stated !== `sha256:${digest}`) return { valid: false, reason: 'hash_mismatch', key_id: keyId };
  const signature = fromBase64Url(doc.signature.value);
  if (!signature || doc.signature.alg !== 'Ed25519') return { valid: false, reason: 'signature_invalid', key_id: keyId };
  const signedAt = new Date(String(doc.payload[SIGNED_AT[doc.schema_version]] ?? ''));
  const verdict = check(keyId, Buffer.from(digest, 'ascii'), signature, signedAt);
  return verdict.valid ? { valid: true, key_id: keyId, ...(verdict.warning ? { warning: verdict.warning } : {}) } : { valid: false, reason: verdict.reason, key_id: keyId };
}

function isRecordShape(doc: unknown): doc is SignedRecord {
  if (typeof doc !== 'object' || doc === null) return false;
  const d = doc as Record<string, unknown>;
  const sig = d.signature as Record<string, unknown> | undefined;
  return (
    typeof d.schema_version === 'string' &&
    typeof d.payload === 'object' && d.payload !== null && !Array.isArray(d.payload) &&
    typeof sig === 'object' && sig !== null &&
    typeof sig.key_id === 'string' && typeof sig.value === 'string' && typeof sig.alg === 'string'
  );
}
