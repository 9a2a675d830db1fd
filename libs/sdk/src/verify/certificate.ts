import { canonicalJson } from '../encoding/canonical-json';
import { normalizeSha256, sha256Hex } from '../encoding/hashing';
import { SignatureFailure, SigningKeyStatus, verifyDigestSignature } from './keys';

export const CERT_SCHEMA_VERSION = 'service.cert.v1';
export const MANIFEST_SCHEMA_VERSION = 'service.manifest.v1';
/** Schema versions that verify, and whether each is deprecated (DESIGN "Schema versions"). */
const CERT_SCHEMAS = new Map<string, { deprecated: boolean }>([
  ['service.cert.v1', { deprecated: false }],
  ['cert.v2', { deprecated: true }],
]);

/** The signed content of a certificate (fields beyond these are signed too). */
export interface CertificatePayload {
  schema_version: string;
  certification_id: string;
  timestamp: string;
  issuer: string;
  dataset_hash: string;
  algorithm: string;
  rows: number;
  columns: number;
  [field: string]: unknown;
}

/** GET /api/certificates/{id}/signed-payload: the exact payload that was signed, and its signature. */
export interface SignedManifest {
  schema_version: string;
  payload: CertificatePayload;
  signature: { alg: string; key_id: string; value: string };
}

/** GET /api/certificates/{id}: the payload's fields plus `signature: "ed25519:<base64url>"` (no key id). */
export type Certificate = CertificatePayload & { signature: string };

export type CertificateFailure = SignatureFailure | 'malformed' | 'unsupported_schema_version' | 'artifact_hash_mismatch' | 'certificate_id_mismatch';

export interface CertificateVerification {
  valid: boolean;
  /** Why `valid` is false; a stable snake_case string. */
  reason?: CertificateFailure;
  /** Status of the signing key in the keys document, when the key was found. */
  key_status?: SigningKeyStatus;
  key_id: string | null;
  /** e.g. `signed_by_revoked_key_before_revocation`, `deprecated_schema`. */
  warnings: string[];
  schema_version: string | null;
  is_deprecated: boolean;
  certificate_id: string | null;
  issued_at: string | null;
  /** `sha256:<hex>` of the payload's RFC 8785 form; its hex is what was signed. */
  payload_hash: string | null;
  /** Whether `options.artifactHash` equals the certified dataset_hash; null when none was given. */
  artifact_hash_match: boolean | null;
}

export interface VerifyCertificateOptions {
  /** The artifact's hash (`sha256:<hex>` or bare hex), checked against the certificate's dataset_hash. */
  artifactHash?: string;
  /**
   * The certificate id asked for: the payload must name it (any case). Without it, another genuine
   * certificate of the authority, served in its place, would verify.
   */
  certificateId?: string;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Splits either accepted form into payload, key id (null if unknown) and signature value. */
function unpack(input: unknown): { payload: Record<string, unknown>; keyId: string | null; value: unknown; alg: unknown; envelope: unknown } | null {
  if (!isObject(input)) return null;
  if (isObject(input.payload) && isObject(input.signature)) {
    const sig = input.signature;
    if (typeof sig.key_id !== 'string') return null;
    return { payload: input.payload, keyId: sig.key_id, value: sig.value, alg: sig.alg, envelope: input.schema_version };
  }
  if (typeof input.signature === 'string' && input.signature.startsWith('ed25519:')) {
    const { signature, ...payload } = input;
    return { payload, keyId: null, value: signature.slice('ed25519:'.length), alg: 'Ed25519', envelope: undefined };
  }
  return null;
}

/**
 * Verifies a certificate offline against the authority's keys document. Accepts the signed
 * payload (SignedManifest) or the Certificate resource. Never throws: a failure has a `reason`.
 */
export function verifyCertificate(signedPayload: unknown, keysDocument: unknown, options: VerifyCertificateOptions = {}): CertificateVerification {
  const result: CertificateVerification = {
    valid: false,
    key_id: null,
    warnings: [],
    schema_version: null,
    is_deprecated: false,
    certificate_id: null,
    issued_at: null,
    payload_hash: null,
    artifact_hash_match: null,
  };
  const fail = (reason: CertificateFailure): CertificateVerification => ({ ...result, valid: false, reason });
  const parts = unpack(signedPayload);
  if (!parts) return fail('malformed');
  const { payload } = parts;
  result.key_id = parts.keyId;
  result.schema_version = typeof payload.schema_version === 'string' ? payload.schema_version : null;
  result.certificate_id = typeof payload.certification_id === 'string' ? payload.certification_id : null;
  result.issued_at = typeof payload.timestamp === 'string' ? payload.timestamp : null;
  if (options.artifactHash !== undefined) {
    const wanted = normalizeSha256(options.artifactHash);
    result.artifact_hash_match = wanted !== null && wanted === payload.dataset_hash;
  }

  // The envelope is not signed. The service labels it service.manifest.v1, except for imported
  // legacy certificates, whose label repeats the payload's schema_version.
  if (parts.envelope !== undefined && parts.envelope !== MANIFEST_SCHEMA_VERSION && parts.envelope !== result.schema_version) {
    return fail('unsupported_schema_version');
  }
  const schema = result.schema_version === null ? undefined : CERT_SCHEMAS.get(result.schema_version);
  if (!schema) return fail(result.schema_version === null ? 'malformed' : 'unsupported_schema_version');
  result.is_deprecated = schema.deprecated;
  if (schema.deprecated) result.warnings.push('deprecated_schema');
  if (parts.alg !== 'Ed25519') return fail('unsupported_algorithm');

  let digest: string;
  try {
    digest = sha256Hex(canonicalJson(payload));
  } catch {
    return fail('malformed');
  }
  result.payload_hash = `sha256:${digest}`;
  const verdict = verifyDigestSignature(keysDocument, parts.keyId, digest, parts.value, payload.timestamp);
  if (verdict.key) {
    result.key_id = verdict.key.key_id;
    result.key_status = verdict.key.status;
  }
  if (!verdict.valid) return fail(verdict.reason);
  result.warnings.push(...verdict.warnings);
  if (options.certificateId !== undefined && (result.certificate_id === null || result.certificate_id.toLowerCase() !== options.certificateId.toLowerCase())) {
    return fail('certificate_id_mismatch');
  }
  if (result.artifact_hash_match === false) return fail('artifact_hash_mismatch');
  return { ...result, valid: true };
}
