import { z } from 'zod';
import { manifestRoot } from './merkle';

/**
 * Payload schemas for predictions submitted through issuance (service-interface.md, "Prediction
 * receipt payload" and "Prediction manifest payload"). Unknown fields pass through: the content
 * is the customer's and is certified as sent.
 */

export const PREDICTION_RECEIPT_SCHEMA = 'prediction_receipt.v1';
export const PREDICTION_MANIFEST_SCHEMA = 'prediction_manifest.v1';
export const MAX_PREDICTION_HASHES = 100_000;

const SHA256_TAGGED = /^sha256:[0-9a-f]{64}$/;

const required = (expected: string) => (issue: { input?: unknown }) =>
  issue.input === undefined ? 'is required' : `must be ${expected}`;

const text = () => z.string({ error: required('a string') }).min(1, { error: 'must not be empty' });

// RFC 3339 profile of ISO-8601: a full date-time with seconds and a zone (Z or ±hh:mm), because a
// certified instant must not depend on the reader's time zone.
const dateTime = () =>
  z.iso.datetime({ offset: true, error: required('an ISO-8601 date-time with a zone, e.g. 2025-01-31T12:00:00Z') });

const sha256 = () =>
  z.string({ error: required('a string') }).regex(SHA256_TAGGED, { error: 'must be sha256:<64 lowercase hex>' });

const literal = <T extends string>(value: T) => z.literal(value, { error: required(`"${value}"`) });

export const predictionReceiptSchema = z.looseObject({
  artifact_type: literal('prediction'),
  artifact_schema: literal(PREDICTION_RECEIPT_SCHEMA),
  source: text(),
  prediction_id: text(),
  model_version: text().optional(),
  predicted_at: dateTime(),
  context_summary: text(),
});

const predictionHashes = z
  .array(sha256(), { error: required('an array of sha256:<hex> strings') })
  .min(1, { error: 'must list at least one prediction hash' })
  .max(MAX_PREDICTION_HASHES, { error: `must list at most ${MAX_PREDICTION_HASHES} prediction hashes` })
  .superRefine((hashes, ctx) => {
    const seen = new Map<string, number>();
    for (let i = 0; i < hashes.length; i++) {
      const first = seen.get(hashes[i]);
      if (first !== undefined) {
        ctx.addIssue({ code: 'custom', path: [i], message: `duplicates prediction_hashes.${first}` });
        return;
      }
      seen.set(hashes[i], i);
    }
  });

export const predictionManifestSchema = z
  .looseObject({
    artifact_type: literal('prediction_manifest'),
    artifact_schema: literal(PREDICTION_MANIFEST_SCHEMA),
    source: text(),
    period_start: dateTime(),
    period_end: dateTime(),
    prediction_hashes: predictionHashes,
    manifest_hash: sha256(),
  })
  .superRefine((m, ctx) => {
    if (Date.parse(m.period_end) < Date.parse(m.period_start)) {
      ctx.addIssue({ code: 'custom', path: ['period_end'], message: 'must not be before period_start' });
    }
  });

export type PredictionReceipt = z.infer<typeof predictionReceiptSchema>;
export type PredictionManifest = z.infer<typeof predictionManifestSchema>;

export type PredictionPayloadValidation =
  | { kind: 'none' }
  | { kind: 'receipt' | 'manifest'; ok: true }
  | {
      kind: 'receipt' | 'manifest';
      ok: false;
      code: 'invalid_prediction_receipt' | 'invalid_prediction_manifest';
      field: string;
      message: string;
    };

/**
 * Validates content whose artifact_schema names a prediction schema; anything else is 'none' and
 * is not a prediction. `field` is the dotted path of the first failing field.
 */
export function validatePredictionPayload(content: unknown): PredictionPayloadValidation {
  if (typeof content !== 'object' || content === null || Array.isArray(content)) return { kind: 'none' };
  const schemaName = (content as Record<string, unknown>).artifact_schema;
  const kind = schemaName === PREDICTION_RECEIPT_SCHEMA ? 'receipt' : schemaName === PREDICTION_MANIFEST_SCHEMA ? 'manifest' : null;
  if (kind === null) return { kind: 'none' };
  const code = kind === 'receipt' ? 'invalid_prediction_receipt' : 'invalid_prediction_manifest';
  const fail = (field: string, message: string): PredictionPayloadValidation => ({ kind, ok: false, code, field, message });

  const parsed = kind === 'receipt' ? predictionReceiptSchema.safeParse(content) : predictionManifestSchema.safeParse(content);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue.path.map(String).join('.');
    return fail(field, `${field || 'content'} ${issue.message}`);
  }
  if (kind === 'manifest') {
    const manifest = parsed.data as PredictionManifest;
    const root = manifestRoot(manifest.prediction_hashes);
    if (manifest.manifest_hash !== root) {
      return fail('manifest_hash', `manifest_hash must be the RFC 6962 Merkle root of prediction_hashes: ${root}`);
    }
  }
  return { kind, ok: true };
}
