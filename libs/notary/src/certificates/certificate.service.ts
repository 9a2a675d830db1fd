import { AppError, deepFreeze, LruCache } from '@app/core';
import { canonicalJson, fromBase64Url, keyVerdict, KeyVerdict, parseSha256, sha256Hex, verifyEd25519 } from '@app/crypto';
import { CertificatePayload, MANIFEST_SCHEMA_VERSION, schemaSupport, SignedManifest, signingMessage } from '../domain/certificate';
import { predictionInclusionProof, verifyPredictionProof } from '../domain/merkle';
import { SigningKeyStore } from '../signing-keys/signing-key.store';
import { CachedCertificate, sameRow, SignatureCheck } from './certificate-cache';
import { CertificateReadModel } from './certificate-read-model.repository';

/** Certificates kept in memory per process (parsed manifest and signature check): about 2-3 KB each. */
export const CERTIFICATE_CACHE_SIZE = 10_000;
/** The data of CertificateIssued and CertificateImported (the aggregate's names for them). */
export type { CertificateIssuedData as CertificateIssued, CertificateImportedData as CertificateImported } from '../domain/certificate.aggregate';

export interface VerificationResult {
  verified: boolean;
  status: 'ISSUED' | 'NOT_FOUND';
  certificate_id: string;
  /** The payload's schema: `cert.v2` verifies but is deprecated; an unknown one never verifies. */
  schema_version: string | null;
  is_supported: boolean;
  is_deprecated: boolean;
  issuer: string | null;
  issued_at: string | null;
  signature_alg: 'Ed25519';
  artifact_hash_match: boolean | null;
  /** Why verified is false, or a warning (a key revoked after signing). */
  reason: string | null;
  key_id: string | null;
}

export interface VerificationReport extends VerificationResult {
  checks: { canonical_payload_hash: string; signature: string | null };
}

/**
 * Serves and verifies certificates from the certificates read model (issuance is the
 * issue-certificate use case): the signature recomputed against the key's status, every time.
 */
export class CertificateService {
  private readonly cache = new LruCache<CachedCertificate>(CERTIFICATE_CACHE_SIZE);

  constructor(
    private readonly readModel: CertificateReadModel,
    private readonly keys: SigningKeyStore,
  ) {}

  async manifest(certificateId: string): Promise<SignedManifest | null> {
    return (await this.stored(certificateId))?.manifest ?? null;
  }

  /**
   * The stored certificate, read now (lookups of the same moment share one query); the parsed
   * manifest and its signature check are reused while the row is unchanged.
   */
  private async stored(certificateId: string): Promise<CachedCertificate | null> {
    // A uuid names the same certificate in either case; PostgreSQL answers with the lowercase id.
    certificateId = certificateId.toLowerCase();
    const row = await this.readModel.row(certificateId);
    if (!row) return null;
    const cached = this.cache.get(certificateId);
    if (cached && sameRow(cached.row, row)) return cached;
    const payload = JSON.parse(row.payload) as CertificatePayload;
    // An imported legacy manifest is served as it was imported: its label repeats the payload's schema.
    const schema = row.imported ? payload.schema_version : MANIFEST_SCHEMA_VERSION;
    const entry: CachedCertificate = {
      row,
      manifest: deepFreeze({ schema_version: schema, payload, signature: { alg: 'Ed25519', key_id: row.key_id, value: row.signature } }),
      namesAnother: String(payload.certification_id).toLowerCase() !== row.certificate_id.toLowerCase(),
    };
    this.cache.set(certificateId, entry);
    return entry;
  }

  /** Recomputes the signed message from the stored payload and checks it against the key's status. */
  async verify(certificateId: string, artifactHash?: string): Promise<VerificationResult> {
    return (await this.verifyWithManifest(certificateId, artifactHash)).result;
  }

  /** The verdict together with the manifest it was made on (one read). */
  async verifyWithManifest(certificateId: string, artifactHash?: string): Promise<{ result: VerificationResult; manifest: SignedManifest | null }> {
    const entry = await this.stored(certificateId);
    return { result: this.verdict(certificateId.toLowerCase(), entry, artifactHash), manifest: entry?.manifest ?? null };
  }

  /**
   * The verdict with what was recomputed server-side (the payload's canonical hash, the
   * signature check), for GET /api/verify/{id} and the /verify/{id} page; null when not found.
   */
  async verificationReport(certificateId: string): Promise<{ report: VerificationReport; manifest: SignedManifest } | null> {
    const { result, manifest: m } = await this.verifyWithManifest(certificateId);
    if (!m) return null;
    return { report: { ...result, checks: { canonical_payload_hash: `sha256:${sha256Hex(canonicalJson(m.payload))}`, signature: result.verified ? 'valid' : result.reason } }, manifest: m };
  }

  private verdict(certificateId: string, entry: CachedCertificate | null, artifactHash?: string): VerificationResult {
    if (!entry) {
      return {
        verified: false,
        status: 'NOT_FOUND',
        certificate_id: certificateId,
        schema_version: null,
        is_supported: false,
        is_deprecated: false,
        issuer: null,
        issued_at: null,
        signature_alg: 'Ed25519',
        artifact_hash_match: null,
        reason: 'certificate_not_found',
        key_id: null,
      };
    }
    const m = entry.manifest;
    const support = schemaSupport(m.payload.schema_version);
    const verdict = support.is_supported ? this.checkEntry(entry) : ({ valid: false, reason: 'unsupported_schema_version' } as const);
    const hashMatch = artifactHash === undefined ? null : normalizeHash(artifactHash) === m.payload.dataset_hash;
    return {
      verified: verdict.valid && hashMatch !== false,
      status: 'ISSUED',
      certificate_id: certificateId,
      schema_version: m.payload.schema_version,
      ...support,
      issuer: m.payload.issuer,
      issued_at: m.payload.timestamp,
      signature_alg: 'Ed25519',
      artifact_hash_match: hashMatch,
      reason: !verdict.valid ? verdict.reason : hashMatch === false ? 'artifact_hash_mismatch' : (verdict.warning ?? null),
      key_id: m.signature.key_id,
    };
  }

  /**
   * POST /api/verify/hash. With a certificate id: does the certificate verify and certify this
   * hash? With a hash alone: the certificates of that artifact. Problems go in `error`.
   */
  async verifyHash(certificateId: string, sha256: string): Promise<HashVerificationResult> {
    const hex = parseSha256(sha256);
    const entry = await this.stored(certificateId);
    if (!entry) return { ...EMPTY_HASH_RESULT, error: 'certificate_not_found' };
    const m = entry.manifest;
    const schema = m.payload.schema_version;
    const { is_supported: supported, is_deprecated } = schemaSupport(schema);
    const verdict = supported ? this.checkEntry(entry) : ({ valid: false, reason: 'unsupported_schema_version' } as const);
    // A string that is no SHA-256 is reported, as every problem here, in `error` (the certificate still checked).
    const hashMatched = hex !== null && `sha256:${hex}` === m.payload.dataset_hash;
    return {
      verified: verdict.valid && hashMatched,
      hash_matched: hashMatched,
      signature_valid: verdict.valid,
      schema_version: schema,
      is_supported: supported,
      is_deprecated,
      issuer: m.payload.issuer,
      timestamp: m.payload.timestamp ?? null,
      error: hex === null ? 'invalid_hash' : !verdict.valid ? verdict.reason : hashMatched ? null : 'hash_mismatch',
    };
  }

  /** POST /api/verify/hash with a hash alone: every certificate of that artifact, the first also at the top level. */
  async verifyArtifactHash(sha256: string): Promise<HashVerificationResult & { certificate_id?: string; certificates: (HashVerificationResult & { certificate_id: string })[] }> {
    const hex = parseSha256(sha256);
    if (hex === null) return { ...EMPTY_HASH_RESULT, error: 'invalid_hash', certificates: [] };
    const ids = await this.readModel.idsByHash(`sha256:${hex}`);
    if (ids.length === 0) return { ...EMPTY_HASH_RESULT, error: 'no_certificate_for_hash', certificates: [] };
    const results = await Promise.all(ids.map(async (id) => ({ certificate_id: id, ...(await this.verifyHash(id, sha256)) })));
    return { ...results[0], certificates: results };
  }

  /** The RFC 6962 inclusion proof of one prediction hash in a certified manifest. */
  async predictionProof(certificateId: string, hash: string) {
    const row = await this.readModel.predictionManifest(certificateId);
    if (!row) throw new AppError('not_found', `no certified prediction manifest ${certificateId}`, 404);
    const proof = predictionInclusionProof(row.prediction_hashes, hash);
    if (!proof) throw new AppError('not_found', 'that hash is not among the manifest\'s prediction hashes', 404);
    return { certificate_id: certificateId, manifest_hash: row.manifest_hash, prediction_hash: hash, proof, verified: verifyPredictionProof(proof, hash, row.manifest_hash) };
  }

  checkSignature(m: SignedManifest): KeyVerdict | { valid: false; reason: 'certificate_id_mismatch' } {
    return this.checkEntry({ manifest: m });
  }

  /**
   * The signature check is made once per certificate and public key and kept with the cached
   * entry; the key's status rule (retired, revoked) is applied on every call, from the ring this
   * process reloads whenever any process changes a key.
   */
  private checkEntry(entry: Pick<CachedCertificate, 'manifest' | 'signature'> & { namesAnother?: boolean }): KeyVerdict | { valid: false; reason: 'certificate_id_mismatch' } {
    const m = entry.manifest;
    if (entry.namesAnother) return { valid: false, reason: 'certificate_id_mismatch' };
    const key = this.keys.current.get(m.signature.key_id);
    const publicKey = key?.public_key ?? null;
    if (!entry.signature || entry.signature.publicKey !== publicKey) entry.signature = { publicKey, check: ed25519Check(m, publicKey) };
    const check = entry.signature.check;
    if (check === 'malformed') return { valid: false, reason: 'signature_invalid' };
    if (check === 'unknown_key' || !key) return { valid: false, reason: 'unknown_key' };
    return keyVerdict(key, new Date(m.payload.timestamp), check === 'valid');
  }
}

/** The Ed25519 check of a manifest's signature against a public key (base64url), statuses aside. */
function ed25519Check(m: SignedManifest, publicKey: string | null): SignatureCheck {
  const signature = fromBase64Url(m.signature.value);
  if (!signature) return 'malformed';
  let message: Buffer;
  try {
    message = signingMessage(m.payload);
  } catch {
    return 'malformed';
  }
  if (publicKey === null) return 'unknown_key';
  return verifyEd25519(Buffer.from(publicKey, 'base64url'), message, signature) ? 'valid' : 'invalid';
}

export interface HashVerificationResult {
  verified: boolean;
  hash_matched: boolean;
  signature_valid: boolean;
  /** null when no certificate was found (never an empty string). */
  schema_version: string | null;
  is_supported: boolean;
  is_deprecated: boolean;
  issuer: string | null;
  timestamp: string | null;
  error: string | null;
}

const EMPTY_HASH_RESULT: HashVerificationResult = {
  verified: false,
  hash_matched: false,
  signature_valid: false,
  schema_version: null,
  is_supported: false,
  is_deprecated: false,
  issuer: null,
  timestamp: null,
  error: null,
};

/** `sha256:<hex>` or bare hex, any case → `sha256:<lowercase hex>`; anything else stays as given (no match). */
function normalizeHash(value: string): string {
  const hex = parseSha256(value);
  return hex ? `sha256:${hex}` : value;
}
