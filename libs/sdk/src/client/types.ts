/**
 * Response and request shapes of the endpoints the client wraps today, written by hand from the
 * service. They will be generated from /openapi.json; until then they follow the spec's tables.
 */
import type { Certificate, SignedManifest } from '../verify/certificate';
import type { KeysDocument } from '../verify/keys';
import type { PredictionProofResponse } from '../verify/merkle';
import type { PaymentDecisionRecord, PaymentReceipt } from '../verify/receipt';
import type { TimelineEntry } from '../verify/timeline';

export type { Certificate, SignedManifest, KeysDocument, PredictionProofResponse, PaymentReceipt, PaymentDecisionRecord };

export interface IssueCertificateRequest {
  /** The artifact as a string; JSON is canonicalized (RFC 8785) before hashing. */
  content: string;
  type?: string;
  filename?: string;
  artifact_type?: 'dataset' | 'model' | 'system' | 'output';
}

export interface IssuanceResponse {
  certificate_id: string;
  certificate_type: string;
  schema_version: string;
  signature_alg: 'Ed25519';
  signing_key_id: string;
  signature: string;
  issued_at: string;
  dataset_hash: string;
  verify_url: string;
}

export interface VerifyRequest {
  certificate_id: string;
  /** `sha256:<hex>` of the artifact, checked against the certificate. */
  artifact_hash?: string;
}

export interface VerificationResult {
  verified: boolean;
  status: string;
  certificate_id: string;
  issuer: string | null;
  issued_at: string | null;
  signature_alg: 'Ed25519';
  artifact_hash_match: boolean | null;
  reason?: string | null;
  key_id?: string | null;
}

export type VerifyHashRequest = { cert_id: string; sha256: string } | { hash: string };

export interface HashVerificationResult {
  verified: boolean;
  hash_matched: boolean;
  signature_valid: boolean;
  schema_version: string | null;
  is_supported: boolean;
  is_deprecated: boolean;
  issuer: string | null;
  timestamp: string | null;
  error: string | null;
  /** With `{ hash }` alone: every certificate of that artifact. */
  certificates?: Array<HashVerificationResult & { certificate_id: string }>;
}

export interface RegistryQuery {
  status?: 'certified' | 'unverified';
  artifact_type?: 'dataset' | 'model' | 'system' | 'output';
  industry?: string;
  q?: string;
  visibility?: 'public' | 'private';
  limit?: number;
  cursor?: string;
}

export interface RegistryEntry {
  id: string;
  slug: string;
  title: string;
  summary: string | null;
  artifactType: string;
  status: 'certified' | 'unverified';
  certificateId: string | null;
  artifactHash: string | null;
  rowsCount: number | null;
  industry: string | null;
  tags: string[];
  verificationUrl: string | null;
  [field: string]: unknown;
}

export interface RegistryPage {
  items: RegistryEntry[];
  total: number;
  next_cursor: string | null;
}

export interface QuotaState {
  lane: 'anonymous' | 'agent' | 'authenticated';
  identity_key: string;
  schema_version: string;
  buckets: Record<string, { limit: number; remaining: number; [field: string]: unknown }>;
  lanes_available: string[];
  did_status?: string;
  agent_did_rotation?: { unique_dids_in_window: number; max: number; reset_at: string; window_seconds: number };
  [field: string]: unknown;
}

/** payment_authorization.v1 */
export interface AuthorizationRequest {
  amount_cents: number;
  currency: string;
  merchant_id: string;
  purpose_tag: string;
  delegated_authority?: string;
  expiration_iso: string;
  /** The policy to evaluate; the organization's `default` when absent. */
  policy_id?: string;
}

export interface AuthorizationDecision {
  transaction_id: string;
  authorization_id: string;
  decision: 'authorized' | 'blocked' | 'needs_review';
  policy_id: string | null;
  policy_hash: string | null;
  reason_code: string | null;
  status: string;
  created_at: string;
  [field: string]: unknown;
}

export interface ExecutionResult {
  outcome: string;
  transaction: Record<string, unknown>;
  receipt?: PaymentReceipt;
}

/** GET /api/cdp/transactions/{id}/events, checkable offline with verifyTimeline. */
export interface TransactionTimeline {
  transaction_id: string;
  /** The server's own verdict; verifyTimeline recomputes it. */
  chain_valid: boolean;
  events: TimelineEntry[];
  [field: string]: unknown;
}
