import { DomainError } from '@app/core';
import {
  CERT_SCHEMA_VERSION,
  CertificatePayload,
  ContentRejected,
  digestContent,
  MANIFEST_SCHEMA_VERSION,
  MAX_CONTENT_CHARS,
  SignedManifest,
  signingMessage,
} from './certificate';
import { validatePredictionPayload } from './prediction-schemas';

/**
 * The Certificate aggregate: one stream per certificate (`certificate-<id>`), opened by
 * CertificateIssued (issued here) or CertificateImported (a legacy certificate brought in as it
 * was signed). The paywall's counter is part of issuing: each CertificateIssued takes one of the
 * organization's issuances (free quota plus credits), an invariant the certificates projection
 * holds atomically with the append (a refused one is `notary_paywall`).
 */
export const FREE_ISSUANCES = 3;
export const CERTIFICATE_ISSUED = 'certificate.issued';
export const CERTIFICATE_IMPORTED = 'certificate.imported';
export const certificateStream = (id: string) => `certificate-${id}`;

export interface CertificateIssuedData {
  org_id: string;
  manifest: SignedManifest;
  /** For a prediction manifest: its hashes, so inclusion proofs can be served later. */
  prediction_hashes?: string[];
  /** Listed in the public registry from the start (`visibility: "public"` at issuance); private when absent. */
  visibility?: 'public' | 'private';
}

/** A legacy certificate brought in by `certificates import-legacy`, as it was signed. */
export interface CertificateImportedData {
  org_id: string;
  manifest: SignedManifest;
}

export type CertificateEvent =
  | { type: typeof CERTIFICATE_ISSUED; data: CertificateIssuedData }
  | { type: typeof CERTIFICATE_IMPORTED; data: CertificateImportedData };

export interface CertificateState {
  certificate_id: string;
  org_id: string;
  manifest: SignedManifest;
  imported: boolean;
  prediction_hashes: string[] | null;
  /** Stream revision of the last event applied. */
  revision: number;
}

/** Folds one event; a certificate is opened once and never changes after. */
export function applyCertificate(state: CertificateState | null, event: { type: string; data: unknown }): CertificateState {
  if (state !== null) throw new DomainError('illegal_transition', `${event.type} after the certificate was recorded`, { event: event.type });
  if (event.type !== CERTIFICATE_ISSUED && event.type !== CERTIFICATE_IMPORTED) {
    throw new DomainError('illegal_transition', `${event.type} is not a certificate event`, { event: event.type });
  }
  const d = event.data as CertificateIssuedData;
  return {
    certificate_id: d.manifest.payload.certification_id,
    org_id: d.org_id,
    manifest: d.manifest,
    imported: event.type === CERTIFICATE_IMPORTED,
    prediction_hashes: d.prediction_hashes ?? null,
    revision: 0,
  };
}

export const foldCertificate = (events: readonly { type: string; data: unknown }[]): CertificateState | null =>
  events.reduce<CertificateState | null>((state, e) => applyCertificate(state, e), null);

export interface IssueCertificate {
  certificateId: string;
  orgId: string;
  content: string;
  type?: string;
  filename?: string;
  /** The registry's artifact type; `output` when not given. */
  artifact_type?: 'dataset' | 'model' | 'system' | 'output';
  /** Its registry listing: `public` lists it at once; private (the default) until its owner publishes it. */
  visibility?: 'public' | 'private';
}

export interface IssuanceContext {
  now: Date;
  /** This authority's name in `issuer`. */
  issuer: string;
  /** Signs with the active key: the key id and the raw Ed25519 signature. */
  sign(message: Buffer): { key_id: string; signature: Buffer };
}

/**
 * Issues a certificate: hash the content (JCS for JSON, else its UTF-8 bytes), check a
 * prediction receipt or manifest against its schema, build the payload and sign it. Returns the
 * one event that records it and the manifest.
 */
export function issueCertificate(state: CertificateState | null, cmd: IssueCertificate, ctx: IssuanceContext): { events: CertificateEvent[]; manifest: SignedManifest } {
  if (state !== null) throw new DomainError('illegal_transition', `certificate ${cmd.certificateId} exists already`);
  if (cmd.content.length > MAX_CONTENT_CHARS) throw new DomainError('content_too_large', `content exceeds ${MAX_CONTENT_CHARS.toLocaleString('en')} characters`);
  let digest;
  try {
    digest = digestContent(cmd.content);
  } catch (err) {
    if (err instanceof ContentRejected) throw new DomainError(err.code, err.message);
    throw err;
  }
  // A prediction manifest's hash must be the RFC 6962 root of its hashes, so inclusion proofs hold later.
  const prediction = validatePredictionPayload(digest.json);
  if (prediction.kind !== 'none' && !prediction.ok) {
    throw new DomainError(prediction.code, `${prediction.field}: ${prediction.message}`, [{ field: prediction.field, message: prediction.message }]);
  }
  const json = digest.json as { artifact_schema?: string; manifest_hash?: string; prediction_hashes?: string[] };
  const payload: CertificatePayload = {
    schema_version: CERT_SCHEMA_VERSION,
    certification_id: cmd.certificateId,
    timestamp: ctx.now.toISOString(),
    issuer: ctx.issuer,
    dataset_hash: digest.dataset_hash,
    algorithm: digest.algorithm,
    rows: digest.rows,
    columns: digest.columns,
    content_type: cmd.type ?? 'text',
    filename: cmd.filename ?? null,
    artifact_type: cmd.artifact_type ?? 'output',
    ...(prediction.kind !== 'none' ? { artifact_schema: json.artifact_schema } : {}),
    ...(prediction.kind === 'manifest' ? { manifest_hash: json.manifest_hash } : {}),
  };
  const { key_id, signature } = ctx.sign(signingMessage(payload));
  const manifest: SignedManifest = { schema_version: MANIFEST_SCHEMA_VERSION, payload, signature: { alg: 'Ed25519', key_id, value: signature.toString('base64url') } };
  const data: CertificateIssuedData = {
    org_id: cmd.orgId,
    manifest,
    ...(prediction.kind === 'manifest' ? { prediction_hashes: json.prediction_hashes } : {}),
    ...(cmd.visibility === 'public' ? { visibility: 'public' as const } : {}),
  };
  return { events: [{ type: CERTIFICATE_ISSUED, data }], manifest };
}
