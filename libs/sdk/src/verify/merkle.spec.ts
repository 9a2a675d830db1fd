import { readdirSync, readFileSync, statSync } from 'node:fs';
import { createHash } from 'node:crypto';
import * as path from 'node:path';
import { manifestRoot, predictionInclusionProof } from '@app/notary';
import { merkleLeafHash, verifyConsistency, verifyInclusion, verifyPredictionProof } from './merkle';

// transparency-dev/merkle testdata, read in place; a missing folder fails the suite.
const VECTORS = path.resolve(__dirname, '../../../../../shared/vectors/merkle');
const jsonFiles = (dir: string): string[] =>
  readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const full = path.join(dir, name);
      return statSync(full).isDirectory() ? jsonFiles(full) : name.endsWith('.json') ? [full] : [];
    });
const inclusionFiles = jsonFiles(path.join(VECTORS, 'inclusion'));
const consistencyFiles = jsonFiles(path.join(VECTORS, 'consistency'));
const b64 = (s: string) => new Uint8Array(Buffer.from(s, 'base64'));
const tag = (s: string) => `sha256:${Buffer.from(s, 'base64').toString('hex')}`;
const rel = (f: string) => path.relative(VECTORS, f);

describe('RFC 6962 vectors (transparency-dev/merkle)', () => {
  it('finds them', () => {
    expect(inclusionFiles.length).toBeGreaterThan(0);
    expect(consistencyFiles.length).toBeGreaterThan(0);
  });

  it.each(inclusionFiles.map((f) => [rel(f), f]))('inclusion %s: verifyInclusion and verifyPredictionProof', (_name, file) => {
    const v = JSON.parse(readFileSync(file, 'utf8'));
    const proof = (v.proof ?? []) as string[];
    expect(verifyInclusion(b64(v.leafHash), v.leafIdx, v.treeSize, proof.map(b64), b64(v.root))).toBe(!v.wantErr);
    // The same vector in the service's proof shape (hashes as sha256:<hex>).
    const shaped = { leaf_index: v.leafIdx, tree_size: v.treeSize, leaf_hash: tag(v.leafHash), audit_path: proof.map(tag), root: tag(v.root) };
    expect(verifyPredictionProof(shaped).valid).toBe(!v.wantErr);
  });

  it.each(consistencyFiles.map((f) => [rel(f), f]))('consistency %s', (_name, file) => {
    const v = JSON.parse(readFileSync(file, 'utf8'));
    expect(verifyConsistency(v.size1, v.size2, (v.proof ?? []).map(b64), b64(v.root1), b64(v.root2))).toBe(!v.wantErr);
  });
});

describe('verifyPredictionProof against the server’s proofs', () => {
  const hashes = Array.from({ length: 13 }, (_, i) => `sha256:${createHash('sha256').update(`prediction ${i}`).digest('hex')}`);
  const root = manifestRoot(hashes);
  // What GET /api/predictions/proof answers.
  const response = (h: string) => JSON.parse(JSON.stringify({ certificate_id: crypto.randomUUID(), manifest_hash: root, prediction_hash: h, proof: predictionInclusionProof(hashes, h), verified: true }));

  it('verifies every prediction of the manifest, pinned to the certified manifest_hash', () => {
    hashes.forEach((h, i) => {
      expect(verifyPredictionProof(response(h), { manifestHash: root })).toEqual({ valid: true, warnings: [], leaf_index: i, tree_size: 13, root });
      expect(verifyPredictionProof(response(h).proof, { predictionHash: h, manifestHash: root })).toMatchObject({ valid: true, warnings: [] });
    });
  });

  it('warns when the root or the leaf is not pinned by the caller', () => {
    expect(verifyPredictionProof(response(hashes[0]))).toMatchObject({ valid: true, warnings: ['root_not_pinned'] });
    expect(verifyPredictionProof(response(hashes[0]).proof)).toMatchObject({ valid: true, warnings: ['leaf_not_bound', 'root_not_pinned'] });
  });

  it('refuses a proof for another prediction, another manifest, or a tampered path', () => {
    const r = response(hashes[5]);
    const other = manifestRoot(hashes.slice(1));
    expect(verifyPredictionProof(r, { predictionHash: hashes[6] })).toMatchObject({ valid: false, reason: 'leaf_mismatch' });
    expect(verifyPredictionProof(r, { manifestHash: other })).toMatchObject({ valid: false, reason: 'root_mismatch' });
    expect(verifyPredictionProof({ ...r, manifest_hash: other })).toMatchObject({ valid: false, reason: 'root_mismatch' });
    const p = r.proof;
    const bad = [
      { ...p, leaf_index: 6 },
      // (12 would still verify: index 5 takes the same turns in 12 and 13 leaves; the root binds the size.)
      { ...p, tree_size: 8 },
      { ...p, tree_size: 5 },
      { ...p, audit_path: [...p.audit_path].reverse() },
      { ...p, audit_path: p.audit_path.slice(1) },
      { ...p, root: other },
    ];
    for (const proof of bad) expect(verifyPredictionProof({ ...r, manifest_hash: undefined, proof }).valid).toBe(false);
    expect(merkleLeafHash(new Uint8Array(32)).length).toBe(32);
  });

  it('answers malformed input with reason malformed, never throwing', () => {
    const p = response(hashes[0]).proof;
    const inputs: unknown[] = [null, 'x', {}, { ...p, leaf_index: '0' }, { ...p, tree_size: 2 ** 64 }, { ...p, audit_path: ['sha256:00'] }, { ...p, root: 'SHA256:' + 'a'.repeat(64) }];
    for (const input of inputs) expect(verifyPredictionProof(input)).toMatchObject({ valid: false, reason: 'malformed' });
    expect(verifyPredictionProof(p, { predictionHash: 'abc' })).toMatchObject({ valid: false, reason: 'malformed' });
  });
});
