import { z } from 'zod';
import { isStorableTime, nulTextSteps } from '@app/core';
import { canonicalJson, fromBase64Url, KeyRing, KeyRingError, PublicSigningKey } from '@app/crypto';
import { CertificatePayload, LEGACY_CERT_SCHEMA_VERSION, SignedManifest, signingMessage } from './certificate';

/**
 * Legacy `cert.v2` certificates, imported with `npm run cli -- certificates import-legacy <file>
 * --org <org_id>`. The file is JSON: one legacy signed manifest, or an array of them.
 *
 *   { "schema_version": "cert.v2",
 *     "payload": { "schema_version": "cert.v2", "certification_id": "<uuid>",
 *                  "timestamp": "<ISO-8601 with zone>", "issuer": "...", "dataset_hash": "sha256:<hex>",
 *                  ...any other signed fields (algorithm, rows, columns, inner_artifacts, ...) },
 *     "signature": { "alg": "Ed25519", "key_id": "<uuid>", "value": "<base64url, 64 bytes>" },
 *     "public_key": "<base64url of the raw 32-byte Ed25519 public key>" }
 *
 * The legacy authority signed as we do (DESIGN: "Signing"): Ed25519 over the ASCII lowercase hex
 * SHA-256 of the RFC 8785 bytes of `payload`. Only `payload` is signed, so the outer
 * `schema_version` must repeat the payload's. `public_key` may be left out for a key_id a
 * previous import registered. Pure functions; the I/O is ImportLegacyCertificatesHandler's.
 */

export const MAX_LEGACY_CERTIFICATES_PER_FILE = 10_000;

export interface LegacyCertificate {
  manifest: SignedManifest;
  /** The legacy signer's public key, when the file carries it. */
  public_key: string | null;
}

export interface LegacyFileProblem {
  /** Position in the file's array (0 for a single object); null for the file as a whole. */
  index: number | null;
  field: string;
  message: string;
}

export type ParsedLegacyFile = { ok: true; certificates: LegacyCertificate[] } | { ok: false; problems: LegacyFileProblem[] };

const SHA256_TAGGED = /^sha256:[0-9a-f]{64}$/;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

/**
 * Where a payload holds U+0000 (which would fail the import's write with a database error), as a
 * file problem's field: `payload.a.0.b`, a NUL in a property name written `\u0000`.
 */
function nulField(payload: unknown): string | null {
  const steps = nulTextSteps(payload);
  return steps && ['payload', ...steps.map((step) => String(step).replaceAll('\u0000', '\\u0000'))].join('.');
}

const legacyPayload = z.looseObject({
  schema_version: z.string().min(1),
  certification_id: z.uuid({ error: 'must be a uuid' }),
  timestamp: z.iso
    .datetime({ offset: true, error: 'must be an ISO-8601 date-time with a zone' })
    // Year 0 (`0000-…`, or `0001-01-01T00:30:00+01:00`, year 0 in UTC) is refused by PostgreSQL.
    .refine((t) => isStorableTime(Date.parse(t)), { error: 'must be between the years 1 and 9999 (in UTC)' }),
  issuer: z.string().min(1),
  dataset_hash: z.string().regex(SHA256_TAGGED, { error: 'must be sha256:<64 lowercase hex>' }),
  algorithm: z.string().optional(),
  rows: z.number().int().nonnegative().optional(),
  columns: z.number().int().nonnegative().optional(),
});

// The envelope is not signed: unknown fields in it are refused rather than silently dropped.
const legacyManifest = z
  .strictObject({
    schema_version: z.string().min(1),
    payload: legacyPayload,
    signature: z.strictObject({
      alg: z.literal('Ed25519'),
      key_id: z.uuid({ error: 'must be a uuid' }),
      value: z.string().regex(BASE64URL, { error: 'must be base64url' }),
    }),
    public_key: z.string().regex(BASE64URL, { error: 'must be base64url' }).optional(),
  })
  .refine((m) => m.schema_version === m.payload.schema_version, {
    path: ['schema_version'],
    error: 'must equal payload.schema_version (only the payload is signed)',
  });

/** Parses and checks the shape of a legacy import file; signatures are checked by planLegacyImport. */
export function parseLegacyFile(text: string): ParsedLegacyFile {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    return { ok: false, problems: [{ index: null, field: '', message: `not JSON: ${(err as Error).message}` }] };
  }
  const entries = Array.isArray(json) ? json : [json];
  if (entries.length === 0) return { ok: false, problems: [{ index: null, field: '', message: 'the array holds no certificate' }] };
  if (entries.length > MAX_LEGACY_CERTIFICATES_PER_FILE) {
    return { ok: false, problems: [{ index: null, field: '', message: `at most ${MAX_LEGACY_CERTIFICATES_PER_FILE} certificates per file; split it` }] };
  }
  const problems: LegacyFileProblem[] = [];
  const certificates: LegacyCertificate[] = [];
  entries.forEach((entry, index) => {
    const parsed = legacyManifest.safeParse(entry);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) problems.push({ index, field: issue.path.join('.'), message: issue.message });
      return;
    }
    const nul = nulField(parsed.data.payload);
    if (nul !== null) {
      problems.push({ index, field: nul, message: 'must not contain U+0000 (it cannot be stored)' });
      return;
    }
    try {
      canonicalJson(parsed.data.payload);
    } catch (err) {
      problems.push({ index, field: 'payload', message: `cannot be canonicalized: ${(err as Error).message}` });
      return;
    }
    const { public_key, ...manifest } = parsed.data;
    certificates.push({ manifest: { ...manifest, payload: manifest.payload as CertificatePayload }, public_key: public_key ?? null });
  });
  return problems.length ? { ok: false, problems } : { ok: true, certificates };
}

/** A certificate already in the store under the same id. */
export interface ExistingCertificate {
  org_id: string;
  imported: boolean;
  manifest: SignedManifest;
}

export interface LegacyRefusal {
  index: number;
  certificate_id: string;
  key_id: string;
  reason: string;
  message: string;
}

export interface LegacyImportPlan {
  /** New certificates, in file order, each once. */
  toImport: SignedManifest[];
  /** Ids already imported with the same content (into the same organization). */
  alreadyImported: string[];
  /** Legacy keys added to the ring as verify-only keys. */
  keysAdded: PublicSigningKey[];
  /** When not empty, nothing may be written. */
  refused: LegacyRefusal[];
}

const REASONS: Record<string, string> = {
  unsupported_schema_version: `only ${LEGACY_CERT_SCHEMA_VERSION} certificates can be imported`,
  unknown_key: 'the signing key is not known and the file does not carry its public_key',
  key_id_conflict: 'the key_id is already known with another public key',
  invalid_public_key: 'public_key is not a base64url Ed25519 public key (32 bytes)',
  signature_invalid: 'the signature does not verify against the key',
  signed_after_retirement: 'dated after its key was registered as retired (a certificate from the future?)',
  key_revoked: 'its key was revoked before the certificate was dated',
  invalid_signing_time: 'the timestamp is not a usable date',
  certificate_conflict: 'a certificate with this id already exists with other content or in another organization',
};

const sameManifest = (a: SignedManifest, b: SignedManifest) =>
  a.signature.key_id === b.signature.key_id && a.signature.value === b.signature.value && canonicalJson(a.payload) === canonicalJson(b.payload);

/**
 * Decides an import against a fresh key ring (which it extends with the file's new legacy keys)
 * and the certificates already stored. Every certificate must verify against its key under the
 * key status rule, exactly as verification will later; any refusal or conflict refuses the file.
 */
export function planLegacyImport(
  ring: KeyRing,
  certificates: LegacyCertificate[],
  existing: (certificateId: string) => ExistingCertificate | undefined,
  orgId: string,
  now: Date,
): LegacyImportPlan {
  const plan: LegacyImportPlan = { toImport: [], alreadyImported: [], keysAdded: [], refused: [] };
  // A new key's created_at: the earliest date it is known to have signed at.
  const firstUse = new Map<string, number>();
  for (const { manifest: m } of certificates) {
    const at = Date.parse(m.payload.timestamp);
    firstUse.set(m.signature.key_id, Math.min(at, firstUse.get(m.signature.key_id) ?? at));
  }
  // The file's public keys first, so a key may be given on any one of its certificates.
  const keyErrors = new Map<number, string>();
  certificates.forEach(({ manifest: m, public_key }, index) => {
    if (public_key === null) return;
    const keyId = m.signature.key_id;
    try {
      const { key, added } = ring.addVerifyOnly({ key_id: keyId, public_key, created_at: new Date(firstUse.get(keyId)!).toISOString() }, now);
      if (added) plan.keysAdded.push(key);
    } catch (err) {
      if (!(err instanceof KeyRingError)) throw err;
      keyErrors.set(index, err.code);
    }
  });

  const seen = new Map<string, SignedManifest>();
  certificates.forEach(({ manifest: m }, index) => {
    const certificateId = m.payload.certification_id;
    const keyId = m.signature.key_id;
    const refuse = (reason: string): void => {
      plan.refused.push({ index, certificate_id: certificateId, key_id: keyId, reason, message: REASONS[reason] ?? reason });
    };

    if (m.payload.schema_version !== LEGACY_CERT_SCHEMA_VERSION) return refuse('unsupported_schema_version');
    const keyError = keyErrors.get(index);
    if (keyError) return refuse(keyError);
    if (!ring.get(keyId)) return refuse('unknown_key');
    const signature = fromBase64Url(m.signature.value);
    const verdict = signature ? ring.verify(keyId, signingMessage(m.payload), signature, new Date(m.payload.timestamp)) : ({ valid: false, reason: 'signature_invalid' } as const);
    if (!verdict.valid) return refuse(verdict.reason);

    const twin = seen.get(certificateId);
    if (twin) {
      if (!sameManifest(twin, m)) refuse('certificate_conflict');
      return; // the same certificate twice in one file counts once
    }
    seen.set(certificateId, m);
    const stored = existing(certificateId);
    if (!stored) plan.toImport.push(m);
    else if (stored.imported && stored.org_id === orgId && sameManifest(stored.manifest, m)) plan.alreadyImported.push(certificateId);
    else refuse('certificate_conflict');
  });
  return plan;
}
