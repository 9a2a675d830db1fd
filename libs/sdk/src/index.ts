/**
 * @sigil/sdk: the Sigil API client with the spec's backoff contract, and offline verifiers for
 * certificates, receipts, prediction proofs, transaction timelines and webhooks. No Node-only
 * APIs: the same code runs in Node 20+ and in browsers (dist/sigil.browser.js, global `Sigil`).
 */
export { SigilClient, SigilTransport, newIdempotencyKey } from './client/sigil-client';
export type { SigilClientOptions, RequestOptions, QueryValue, CallOptions } from './client/sigil-client';
export { SigilError } from './client/errors';
export { parseRetryAfter, exponentialDelay, MAX_ATTEMPTS, MAX_JITTER_MS, RETRY_STATUSES } from './client/backoff';
export type * from './client/types';

export { verifyCertificate, CERT_SCHEMA_VERSION, MANIFEST_SCHEMA_VERSION } from './verify/certificate';
export type { Certificate, SignedManifest, CertificateVerification, CertificateFailure, CertificatePayload, VerifyCertificateOptions } from './verify/certificate';
export { verifyReceipt, verifySignedRecord, SIGNED_RECORD_SCHEMA_VERSIONS, RECEIPT_SCHEMA_VERSION, DECISION_SCHEMA_VERSION, REVIEW_SCHEMA_VERSION, TIMELINE_ANCHOR_SCHEMA_VERSION } from './verify/receipt';
export type { PaymentReceipt, PaymentDecisionRecord, ReceiptVerification, ReceiptFailure, SignedRecordSchemaVersion, VerifyReceiptOptions } from './verify/receipt';
export { verifyPredictionProof, verifyInclusion, verifyConsistency, merkleLeafHash } from './verify/merkle';
export type { PredictionInclusionProof, PredictionProofVerification, PredictionProofFailure, VerifyPredictionProofOptions } from './verify/merkle';
export { verifyTimeline, timelineEventHash } from './verify/timeline';
export type { TimelineEvent, TimelineEntry, TimelineVerification, TimelineFailure, VerifyTimelineOptions } from './verify/timeline';
export { TIMELINE_ANCHORED, TERMINAL_STATUSES } from './verify/timeline-anchor';
export type { TimelineAnchorSummary, AnchorFailure } from './verify/timeline-anchor';
export { keyStatusVerdict, REVOKED_KEY_WARNING } from './verify/keys';
export type { KeysDocument, SigningKey, SigningKeyStatus, SignatureFailure } from './verify/keys';
export { verifyEd25519 } from './verify/ed25519';

export { verifyWebhook, verifyWebhookOrThrow, WebhookVerificationError } from './webhooks/verify-webhook';
export type { WebhookHeaders, WebhookFailure, WebhookVerification, VerifyWebhookOptions } from './webhooks/verify-webhook';
export { createWebhookDeduplicator } from './webhooks/deduplicator';
export type { WebhookDeduplicator, WebhookDeduplicatorOptions } from './webhooks/deduplicator';

export { canonicalJson, CanonicalizationError } from './encoding/canonical-json';
export { sha256Hex, canonicalHash, hashContent, normalizeSha256 } from './encoding/hashing';
export { toBase64Url, fromBase64Url, toBase64, fromBase64, toHex, fromHex } from './encoding/bytes';
