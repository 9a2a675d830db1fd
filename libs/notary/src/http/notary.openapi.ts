import { z } from 'zod';
import { apiOutput } from '@app/http';
import { ARTIFACT_TYPES } from '../registry/registry.projection';

/** Response shapes of the certificate, signing-key, credits and registry routes, named in the OpenAPI document (and so in the SDK). */

const sha256 = () => z.string().describe('sha256:<64 lowercase hex>');

export const certificatePayloadSchema = apiOutput(
  'CertificatePayload',
  z
    .looseObject({
      schema_version: z.string().describe('service.cert.v1 (cert.v2 for imported legacy certificates)'),
      certification_id: z.string(),
      timestamp: z.string(),
      issuer: z.string(),
      dataset_hash: sha256(),
      algorithm: z.string().describe('jcs-sha256 (JSON, canonicalized with RFC 8785) or sha256 (UTF-8 bytes)'),
      rows: z.number().int(),
      columns: z.number().int(),
      inner_artifacts: z.record(z.string(), z.object({ sha256: z.string() })).optional(),
      content_type: z.string().optional(),
      filename: z.string().nullable().optional(),
      artifact_schema: z.string().optional(),
    })
    .describe('Exactly what was signed; fields beyond these are signed too'),
);

export const manifestSignatureSchema = apiOutput(
  'ManifestSignature',
  z.object({ alg: z.literal('Ed25519'), key_id: z.string(), value: z.string().describe('base64url, no padding') }),
);

export const signedManifestSchema = apiOutput(
  'SignedManifest',
  z
    .object({ schema_version: z.string().describe('service.manifest.v1, or cert.v2 for imported legacy certificates'), payload: certificatePayloadSchema, signature: manifestSignatureSchema })
    .describe('The signed payload: verify offline against /.well-known/signing-keys.json'),
);

export const certificateSchema = apiOutput(
  'Certificate',
  certificatePayloadSchema.extend({ signature: z.string().describe('ed25519:<base64url>') }).describe('The certificate resource: the payload’s fields and its signature'),
);

export const issuanceResponseSchema = apiOutput(
  'IssuanceResponse',
  z.object({
    certificate_id: z.string(),
    certificate_type: z.literal('GENESIS'),
    schema_version: z.literal('cert.v1'),
    signature_alg: z.literal('Ed25519'),
    signing_key_id: z.string(),
    signature: z.string().describe('ed25519:<base64url>'),
    issued_at: z.string(),
    dataset_hash: sha256(),
    verify_url: z.string(),
  }),
);

const verificationFields = {
  verified: z.boolean(),
  status: z.enum(['ISSUED', 'NOT_FOUND']),
  certificate_id: z.string(),
  schema_version: z.string().nullable(),
  is_supported: z.boolean(),
  is_deprecated: z.boolean(),
  issuer: z.string().nullable(),
  issued_at: z.string().nullable(),
  signature_alg: z.literal('Ed25519'),
  artifact_hash_match: z.boolean().nullable(),
  reason: z.string().nullable().describe('why verified is false, or a warning (signed_by_revoked_key_before_revocation)'),
  key_id: z.string().nullable(),
};

export const verificationResultSchema = apiOutput('VerificationResult', z.object(verificationFields));

export const verificationReportSchema = apiOutput(
  'VerificationReport',
  z.object({ ...verificationFields, checks: z.object({ canonical_payload_hash: sha256(), signature: z.string().nullable().describe('valid, or the failure reason') }) }),
);

const hashVerificationFields = {
  verified: z.boolean(),
  hash_matched: z.boolean(),
  signature_valid: z.boolean(),
  schema_version: z.string().nullable(),
  is_supported: z.boolean(),
  is_deprecated: z.boolean(),
  issuer: z.string().nullable(),
  timestamp: z.string().nullable(),
  error: z.string().nullable(),
};

export const hashVerificationResultSchema = apiOutput(
  'HashVerificationResult',
  z.object({
    ...hashVerificationFields,
    certificate_id: z.string().optional().describe('with {hash} alone: the first (newest) certificate found'),
    certificates: z
      .array(z.object({ certificate_id: z.string(), ...hashVerificationFields }))
      .optional()
      .describe('with {hash} alone: every certificate of that artifact hash (the first is also the top level)'),
  }),
);

export const sandboxDatasetSchema = apiOutput(
  'SandboxDataset',
  z.object({
    dataset: z.object({
      filename: z.string(),
      content_type: z.literal('text/csv'),
      content: z.string().describe('the CSV bytes as UTF-8: hash them (sigil hash, or the /verify page) and compare with dataset_hash'),
      rows: z.number().int(),
      columns: z.array(z.string()),
      seed: z.number().int().describe('the same seed makes the same dataset'),
    }),
    certificate: z.object({
      certificate_id: z.string(),
      dataset_hash: z.string(),
      signing_key_id: z.string(),
      signature: z.string(),
      issued_at: z.string(),
      verify_url: z.string(),
    }),
    sandbox_organization_id: z.string(),
  }),
);

export const badgeSchema = apiOutput(
  'Badge',
  z.object({
    schemaVersion: z.literal(1).describe("shields.io's endpoint-badge format"),
    state: z.enum(['verified', 'deprecated', 'revoked_key', 'invalid', 'not_found']),
    label: z.string(),
    message: z.string(),
    color: z.string(),
    certificate_id: z.string(),
    verified: z.boolean(),
    schema_version: z.string().nullable(),
    issued_at: z.string().nullable(),
    key_id: z.string().nullable(),
    reason: z.string().nullable(),
    verify_url: z.string(),
  }),
);

export const signingKeySchema = apiOutput(
  'SigningKey',
  z.object({
    key_id: z.string(),
    algorithm: z.literal('Ed25519'),
    public_key: z.string().describe('base64url of the raw 32-byte public key'),
    created_at: z.string(),
    status: z.enum(['active', 'retired', 'revoked']),
    retired_at: z.string().nullable(),
    revoked_at: z.string().nullable(),
  }),
);

export const keysDocumentSchema = apiOutput('KeysDocument', z.object({ keys: z.array(signingKeySchema) }));

export const predictionProofSchema = apiOutput(
  'PredictionProof',
  z.object({
    certificate_id: z.string(),
    manifest_hash: sha256(),
    prediction_hash: sha256(),
    proof: z.object({
      leaf_index: z.number().int(),
      tree_size: z.number().int(),
      leaf_hash: sha256(),
      audit_path: z.array(sha256()).describe('from the leaf’s sibling up to the root'),
      root: sha256(),
    }),
    verified: z.boolean(),
  }),
);

export const creditsCheckoutSchema = apiOutput(
  'CreditsCheckout',
  z.object({
    checkout_id: z.string(),
    status: z.enum(['completed', 'declined', 'failed']),
    credits: z.number().int(),
    amount_cents: z.number().int(),
    provider: z.string(),
    provider_reference: z.string().nullable(),
    reason: z.string().nullable(),
    credits_purchased_total: z.number().int(),
  }),
);

export const registryEntrySchema = apiOutput(
  'RegistryEntry',
  z.object({
    id: z.string(),
    slug: z.string(),
    title: z.string(),
    summary: z.string().nullable(),
    artifactType: z.enum(ARTIFACT_TYPES),
    status: z.enum(['certified', 'unverified']),
    certificateId: z.string().nullable(),
    artifactHash: z.string().nullable(),
    rowsCount: z.number().int().nullable(),
    industry: z.string().nullable(),
    tags: z.array(z.string()),
    visibility: z.enum(['public', 'private']),
    verificationUrl: z.string().nullable(),
  }),
);

export const registryPageSchema = apiOutput(
  'RegistryPage',
  z.object({ items: z.array(registryEntrySchema), total: z.number().int(), next_cursor: z.string().nullable() }),
);

export const registryEntryRefSchema = apiOutput('RegistryEntryRef', z.object({ id: z.string() }));
