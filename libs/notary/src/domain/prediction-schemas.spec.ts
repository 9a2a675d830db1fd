import { sha256Tagged } from '@app/crypto';
import { manifestRoot } from './merkle';
import { MAX_PREDICTION_HASHES, validatePredictionPayload } from './prediction-schemas';

const receipt = (over: Record<string, unknown> = {}): Record<string, unknown> => ({
  artifact_type: 'prediction',
  artifact_schema: 'prediction_receipt.v1',
  source: 'acme-forecasts',
  prediction_id: 'pred_0001',
  model_version: 'sha256:' + 'a'.repeat(64),
  predicted_at: '2025-03-01T09:30:00Z',
  context_summary: 'EUR/USD close on 2025-03-02',
  ...over,
});

const hashes = (n: number) => Array.from({ length: n }, (_, i) => sha256Tagged(`prediction ${i}`));

const manifest = (over: Record<string, unknown> = {}): Record<string, unknown> => {
  const prediction_hashes = (over.prediction_hashes as string[] | undefined) ?? hashes(5);
  const base: Record<string, unknown> = {
    artifact_type: 'prediction_manifest',
    artifact_schema: 'prediction_manifest.v1',
    source: 'acme-forecasts',
    period_start: '2025-03-01T00:00:00Z',
    period_end: '2025-03-31T23:59:59+02:00',
    prediction_hashes,
  };
  try {
    base.manifest_hash = manifestRoot(prediction_hashes);
  } catch {
    base.manifest_hash = 'sha256:' + '0'.repeat(64); // malformed hashes: the schema answers first
  }
  return { ...base, ...over };
};

const without = (o: Record<string, unknown>, key: string) => {
  const { [key]: _dropped, ...rest } = o;
  return rest;
};

const failure = (content: unknown) => {
  const result = validatePredictionPayload(content);
  if (!('ok' in result) || result.ok) throw new Error(`expected a failure, got ${JSON.stringify(result)}`);
  return result;
};

describe('validatePredictionPayload', () => {
  describe('prediction_receipt.v1', () => {
    it('accepts a valid receipt, with or without model_version, keeping extra fields', () => {
      expect(validatePredictionPayload(receipt())).toEqual({ kind: 'receipt', ok: true });
      expect(validatePredictionPayload(without(receipt(), 'model_version'))).toEqual({ kind: 'receipt', ok: true });
      expect(validatePredictionPayload(receipt({ confidence: 0.82, inputs: { a: 1 } }))).toEqual({ kind: 'receipt', ok: true });
    });

    it.each(['artifact_type', 'source', 'prediction_id', 'predicted_at', 'context_summary'])('requires %s', (field) => {
      expect(failure(without(receipt(), field))).toEqual({
        kind: 'receipt',
        ok: false,
        code: 'invalid_prediction_receipt',
        field,
        message: `${field} is required`,
      });
    });

    it.each([
      ['artifact_type', 'prediction_manifest'],
      ['source', 42],
      ['source', ''],
      ['prediction_id', null],
      ['prediction_id', ['pred_0001']],
      ['model_version', 7],
      ['context_summary', { text: 'x' }],
      ['predicted_at', 1740821400],
    ])('rejects %s = %j', (field, value) => {
      expect(failure(receipt({ [field]: value }))).toMatchObject({ code: 'invalid_prediction_receipt', field });
    });

    it.each([
      '2025-03-01',
      '2025-03-01T09:30:00',
      '2025-03-01 09:30:00Z',
      '2025-02-29T09:30:00Z',
      '2025-03-01T24:30:00Z',
      '01/03/2025 09:30',
      'yesterday',
      '',
    ])('rejects predicted_at %j', (predicted_at) => {
      expect(failure(receipt({ predicted_at }))).toMatchObject({ field: 'predicted_at' });
    });

    it.each(['2025-03-01T09:30:00Z', '2025-03-01T09:30:00.123Z', '2025-03-01T11:30:00+02:00', '2024-02-29T00:00:00-05:00'])(
      'accepts predicted_at %j',
      (predicted_at) => {
        expect(validatePredictionPayload(receipt({ predicted_at }))).toEqual({ kind: 'receipt', ok: true });
      },
    );

    it('names the first failing field in schema order', () => {
      expect(failure(receipt({ source: 1, predicted_at: 'x' })).field).toBe('source');
    });
  });

  describe('prediction_manifest.v1', () => {
    it('accepts a valid manifest, keeping extra fields', () => {
      expect(validatePredictionPayload(manifest())).toEqual({ kind: 'manifest', ok: true });
      expect(validatePredictionPayload(manifest({ note: 'March' }))).toEqual({ kind: 'manifest', ok: true });
      expect(validatePredictionPayload(manifest({ prediction_hashes: hashes(1) }))).toEqual({ kind: 'manifest', ok: true });
    });

    it('accepts a period that starts and ends at the same instant, in different zones', () => {
      const same = manifest({ period_start: '2025-03-01T00:00:00Z', period_end: '2025-03-01T02:00:00+02:00' });
      expect(validatePredictionPayload(same)).toEqual({ kind: 'manifest', ok: true });
    });

    it.each(['artifact_type', 'source', 'period_start', 'period_end', 'prediction_hashes', 'manifest_hash'])('requires %s', (field) => {
      expect(failure(without(manifest(), field))).toEqual({
        kind: 'manifest',
        ok: false,
        code: 'invalid_prediction_manifest',
        field,
        message: `${field} is required`,
      });
    });

    it.each([
      ['artifact_type', 'prediction'],
      ['source', 3],
      ['period_start', '2025-03-01'],
      ['period_end', 'March 31'],
      ['prediction_hashes', 'sha256:' + 'a'.repeat(64)],
      ['prediction_hashes', {}],
      ['prediction_hashes', []],
      ['manifest_hash', 'a'.repeat(64)],
      ['manifest_hash', 'sha256:' + 'A'.repeat(64)],
      ['manifest_hash', 'sha256:abc'],
    ])('rejects %s = %j', (field, value) => {
      expect(failure(manifest({ [field]: value }))).toMatchObject({ code: 'invalid_prediction_manifest', field });
    });

    it.each([
      ['bare hex', 'b'.repeat(64)],
      ['uppercase hex', 'sha256:' + 'B'.repeat(64)],
      ['short', 'sha256:' + 'b'.repeat(63)],
      ['long', 'sha256:' + 'b'.repeat(65)],
      ['another algorithm', 'sha512:' + 'b'.repeat(64)],
      ['a number', 12],
      ['null', null],
    ])('names the bad prediction hash (%s) by index', (_what, bad) => {
      const list: unknown[] = hashes(5);
      list[3] = bad;
      expect(failure(manifest({ prediction_hashes: list }))).toMatchObject({ field: 'prediction_hashes.3' });
    });

    it('rejects a duplicate prediction hash at its second occurrence', () => {
      const list = hashes(5);
      list[4] = list[1];
      expect(failure(manifest({ prediction_hashes: list }))).toMatchObject({
        field: 'prediction_hashes.4',
        message: 'prediction_hashes.4 duplicates prediction_hashes.1',
      });
    });

    it(`accepts ${MAX_PREDICTION_HASHES} prediction hashes and rejects one more`, () => {
      const list = hashes(MAX_PREDICTION_HASHES + 1);
      const full = manifest({ prediction_hashes: list.slice(0, -1) });
      expect(validatePredictionPayload(full)).toEqual({ kind: 'manifest', ok: true });
      // The count is checked before any Merkle work.
      const over = { ...full, prediction_hashes: list };
      expect(failure(over)).toMatchObject({ field: 'prediction_hashes' });
    });

    it('rejects period_end before period_start, comparing instants across zones', () => {
      expect(failure(manifest({ period_end: '2025-02-28T23:59:59Z' }))).toMatchObject({ field: 'period_end' });
      const later = manifest({ period_start: '2025-03-01T00:00:00Z', period_end: '2025-03-01T01:00:00+02:00' });
      expect(failure(later)).toMatchObject({ field: 'period_end', message: 'period_end must not be before period_start' });
    });

    it('rejects a manifest_hash that is not the Merkle root of prediction_hashes, saying what it should be', () => {
      const list = hashes(5);
      const root = manifestRoot(list);
      for (const wrong of [manifestRoot([...list].reverse()), manifestRoot(list.slice(1)), sha256Tagged(list.join(''))]) {
        const result = failure(manifest({ prediction_hashes: list, manifest_hash: wrong }));
        expect(result).toMatchObject({ kind: 'manifest', code: 'invalid_prediction_manifest', field: 'manifest_hash' });
        expect(result.message).toContain(root);
      }
    });
  });

  describe('content that is not a prediction', () => {
    it.each([
      ['null', null],
      ['a string', 'prediction_receipt.v1'],
      ['a number', 1],
      ['an array', [receipt()]],
      ['an object without artifact_schema', { artifact_type: 'prediction', source: 'x' }],
      ['another schema', { ...receipt(), artifact_schema: 'prediction_receipt.v2' }],
      ['a non-string artifact_schema', { ...receipt(), artifact_schema: ['prediction_receipt.v1'] }],
      ['a model card', { name: 'model', version: '1.0' }],
    ])('answers kind none for %s', (_what, content) => {
      expect(validatePredictionPayload(content)).toEqual({ kind: 'none' });
    });
  });
});
