import { canonicalJson, CanonicalizationError, sha256Hex } from '@app/crypto';

/**
 * Certificates: what is hashed, what is signed. Pure functions; no I/O.
 *
 * Content that parses as JSON is hashed in its RFC 8785 form, so pretty-printed and compact
 * JSON get the same hash; anything else is hashed as its UTF-8 bytes. The signature covers the
 * ASCII of the lowercase hex SHA-256 of the JCS bytes of the payload (DESIGN: "Signing").
 */
export const CERT_SCHEMA_VERSION = 'service.cert.v1';
export const MANIFEST_SCHEMA_VERSION = 'service.manifest.v1';
/** The schema of imported legacy certificates: verifiable, deprecated (DESIGN: "Schema versions"). */
export const LEGACY_CERT_SCHEMA_VERSION = 'cert.v2';

export interface SchemaSupport {
  is_supported: boolean;
  is_deprecated: boolean;
}

/** `service.cert.v1` is current, `cert.v2` verifies but is deprecated, anything else is not verified. */
export function schemaSupport(version: unknown): SchemaSupport {
  if (version === CERT_SCHEMA_VERSION) return { is_supported: true, is_deprecated: false };
  if (version === LEGACY_CERT_SCHEMA_VERSION) return { is_supported: true, is_deprecated: true };
  return { is_supported: false, is_deprecated: false };
}
export const MAX_CONTENT_CHARS = 5_000_000;
/**
 * The issuance body limit: 5,000,000 characters can take up to 6 bytes each in a JSON string
 * (\u00XX escapes), plus the envelope. Only this route accepts bodies this large.
 */
export const ISSUANCE_BODY_LIMIT_BYTES = 6 * MAX_CONTENT_CHARS + 64 * 1024;

export interface ContentDigest {
  dataset_hash: string;
  /** How the hash was made: `jcs-sha256` (JSON, canonicalized) or `sha256` (raw UTF-8). */
  algorithm: 'jcs-sha256' | 'sha256';
  rows: number;
  columns: number;
  /** The parsed JSON, when the content was JSON. */
  json?: unknown;
}

export class ContentRejected extends Error {
  constructor(
    readonly code: 'invalid_content',
    message: string,
  ) {
    super(message);
  }
}

export function digestContent(content: string): ContentDigest {
  if (!content.isWellFormed()) throw new ContentRejected('invalid_content', 'content contains a lone surrogate (not valid Unicode)');
  let json: unknown;
  let isJson = false;
  try {
    json = JSON.parse(content);
    isJson = true;
  } catch {
    /* not JSON: hashed as text */
  }
  if (isJson) {
    let canonical: string;
    try {
      canonical = canonicalJson(json);
    } catch (err) {
      if (err instanceof CanonicalizationError) throw new ContentRejected('invalid_content', `JSON content cannot be canonicalized: ${err.message}`);
      throw err;
    }
    const { rows, columns } = shapeOfJson(json);
    return { dataset_hash: `sha256:${sha256Hex(canonical)}`, algorithm: 'jcs-sha256', rows, columns, json };
  }
  const { rows, columns } = shapeOfCsv(content);
  return { dataset_hash: `sha256:${sha256Hex(Buffer.from(content, 'utf8'))}`, algorithm: 'sha256', rows, columns };
}

/** rows/columns of a JSON array of objects (columns = distinct keys); 0 for anything else. */
function shapeOfJson(value: unknown): { rows: number; columns: number } {
  if (!Array.isArray(value) || value.length === 0 || !value.every((r) => r !== null && typeof r === 'object' && !Array.isArray(r))) {
    return { rows: 0, columns: 0 };
  }
  const keys = new Set<string>();
  for (const row of value) for (const k of Object.keys(row)) keys.add(k);
  return { rows: value.length, columns: keys.size };
}

/** rows/columns of CSV text: a header line with a comma, then data lines; 0 otherwise. */
function shapeOfCsv(text: string): { rows: number; columns: number } {
  const lines = text.split(/\r?\n/).filter((l) => l.trim().length > 0);
  if (lines.length < 2 || !lines[0].includes(',')) return { rows: 0, columns: 0 };
  return { rows: lines.length - 1, columns: splitCsvLine(lines[0]).length };
}

/** Splits one CSV line by commas outside double quotes (RFC 4180 quoting). */
function splitCsvLine(line: string): string[] {
  const fields: string[] = [];
  let current = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c === '"') {
      if (quoted && line[i + 1] === '"') {
        current += '"';
        i++;
      } else quoted = !quoted;
    } else if (c === ',' && !quoted) {
      fields.push(current);
      current = '';
    } else current += c;
  }
  fields.push(current);
  return fields;
}

/** The signed content of a certificate: the spec's Certificate fields but the signature. */
export interface CertificatePayload {
  schema_version: string;
  certification_id: string;
  timestamp: string;
  issuer: string;
  dataset_hash: string;
  algorithm: string;
  rows: number;
  columns: number;
  inner_artifacts?: Record<string, { sha256: string }>;
  content_type?: string;
  filename?: string | null;
  artifact_schema?: string;
  [extra: string]: unknown;
}

export interface SignedManifest {
  /** `service.manifest.v1` for what we issue; an imported legacy manifest keeps its own label (`cert.v2`). */
  schema_version: string;
  payload: CertificatePayload;
  signature: { alg: 'Ed25519'; key_id: string; value: string };
}

/** The bytes Ed25519 signs: the ASCII lowercase hex SHA-256 of the payload's JCS form. */
export function signingMessage(payload: unknown): Buffer {
  return Buffer.from(sha256Hex(canonicalJson(payload)), 'ascii');
}

/** The Certificate resource: the payload's fields plus `signature: ed25519:<base64url>`. */
export const certificateView = (m: SignedManifest) => ({ ...m.payload, signature: `ed25519:${m.signature.value}` });
