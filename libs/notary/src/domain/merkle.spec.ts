import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import {
  inclusionProof,
  leafHash,
  manifestRoot,
  merkleRoot,
  predictionInclusionProof,
  predictionLeaf,
  verifyConsistency,
  verifyInclusion,
  verifyPredictionProof,
} from './merkle';

// transparency-dev/merkle testdata, read in place (../shared/vectors from the repo root).
const VECTORS = path.resolve(__dirname, '../../../../../shared/vectors/merkle');

function jsonFiles(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const full = path.join(dir, name);
      if (statSync(full).isDirectory()) return jsonFiles(full);
      return name.endsWith('.json') ? [full] : [];
    });
}

const b64 = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, 'base64'));
// Upstream writes a nil proof as null.
const proofOf = (p: string[] | null): Uint8Array[] => (p ?? []).map(b64);
const rel = (f: string) => path.relative(VECTORS, f);

interface InclusionVector {
  leafIdx: number;
  treeSize: number;
  root: string;
  leafHash: string;
  proof: string[] | null;
  wantErr: boolean;
}
interface ConsistencyVector {
  size1: number;
  size2: number;
  root1: string;
  root2: string;
  proof: string[] | null;
  wantErr: boolean;
}

// readdirSync throws if the folder is missing, which fails the suite rather than skipping it.
const inclusionFiles = jsonFiles(path.join(VECTORS, 'inclusion'));
const consistencyFiles = jsonFiles(path.join(VECTORS, 'consistency'));

describe('RFC 6962 vectors from transparency-dev/merkle', () => {
  it('finds the vector files', () => {
    expect(inclusionFiles.length).toBeGreaterThan(0);
    expect(consistencyFiles.length).toBeGreaterThan(0);
  });

  it.each(inclusionFiles.map((f) => [rel(f), f]))('inclusion %s', (_name, file) => {
    const v = JSON.parse(readFileSync(file, 'utf8')) as InclusionVector;
    const ok = verifyInclusion(b64(v.leafHash), v.leafIdx, v.treeSize, proofOf(v.proof), b64(v.root));
    expect(ok).toBe(!v.wantErr);
  });

  it.each(consistencyFiles.map((f) => [rel(f), f]))('consistency %s', (_name, file) => {
    const v = JSON.parse(readFileSync(file, 'utf8')) as ConsistencyVector;
    const ok = verifyConsistency(v.size1, v.size2, proofOf(v.proof), b64(v.root1), b64(v.root2));
    expect(ok).toBe(!v.wantErr);
  });
});

// An independent, deliberately naive RFC 6962 implementation to check against.
const sha = (...parts: Uint8Array[]) => {
  const h = createHash('sha256');
  parts.forEach((p) => h.update(p));
  return new Uint8Array(h.digest());
};
function naiveMth(d: Uint8Array[]): Uint8Array {
  if (d.length === 0) return sha();
  if (d.length === 1) return sha(Uint8Array.of(0), d[0]);
  let k = 1;
  while (k << 1 < d.length) k <<= 1;
  return sha(Uint8Array.of(1), naiveMth(d.slice(0, k)), naiveMth(d.slice(k)));
}
// RFC 6962 §2.1.2 SUBPROOF, to exercise verifyConsistency beyond the vectors.
function naiveSubproof(m: number, d: Uint8Array[], b: boolean): Uint8Array[] {
  const n = d.length;
  if (m === n) return b ? [] : [naiveMth(d)];
  let k = 1;
  while (k << 1 < n) k <<= 1;
  if (m <= k) return [...naiveSubproof(m, d.slice(0, k), b), naiveMth(d.slice(k))];
  return [...naiveSubproof(m - k, d.slice(k), false), naiveMth(d.slice(0, k))];
}

const leavesOf = (n: number) => Array.from({ length: n }, (_, i) => new Uint8Array(Buffer.from(`leaf ${i}`)));
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const flip = (b: Uint8Array, bit: number) => {
  const c = Uint8Array.from(b);
  c[bit >> 3] ^= 1 << (bit & 7);
  return c;
};

describe('merkleRoot', () => {
  it('hashes the empty tree to SHA-256 of the empty string', () => {
    expect(hex(merkleRoot([]))).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  });

  it('agrees with a naive recursive MTH for 0..20 leaves', () => {
    for (let n = 0; n <= 20; n++) expect(hex(merkleRoot(leavesOf(n)))).toBe(hex(naiveMth(leavesOf(n))));
  });

  it('hashes a single leaf with the 0x00 prefix', () => {
    const leaf = Buffer.from('x');
    expect(hex(merkleRoot([leaf]))).toBe(hex(leafHash(leaf)));
    expect(hex(leafHash(leaf))).toBe(createHash('sha256').update(Buffer.from([0, 0x78])).digest('hex'));
  });
});

describe('inclusionProof and verifyInclusion', () => {
  it('verifies the proof of every index of trees of 1..33 leaves', () => {
    for (let n = 1; n <= 33; n++) {
      const leaves = leavesOf(n);
      const root = merkleRoot(leaves);
      for (let i = 0; i < n; i++) {
        const proof = inclusionProof(leaves, i);
        expect(verifyInclusion(leafHash(leaves[i]), i, n, proof, root)).toBe(true);
        // ...and only at its own index. (The size is bound by the root, not the path: index 0 of
        // 3 leaves and of 4 leaves take the same turns, so the same path chains for both.)
        if (n > 1) expect(verifyInclusion(leafHash(leaves[i]), (i + 1) % n, n, proof, root)).toBe(false);
      }
    }
  });

  it('fails when any bit of the leaf hash, the root or the audit path is flipped', () => {
    const accepted: string[] = [];
    let tried = 0;
    for (const n of [1, 2, 3, 5, 6, 8, 13]) {
      const leaves = leavesOf(n);
      const root = merkleRoot(leaves);
      for (let i = 0; i < n; i++) {
        const leaf = leafHash(leaves[i]);
        const proof = inclusionProof(leaves, i);
        const check = (what: string, ok: boolean) => {
          tried++;
          if (ok) accepted.push(`n=${n} i=${i} ${what}`);
        };
        for (let bit = 0; bit < 256; bit++) {
          check(`leaf bit ${bit}`, verifyInclusion(flip(leaf, bit), i, n, proof, root));
          check(`root bit ${bit}`, verifyInclusion(leaf, i, n, proof, flip(root, bit)));
          proof.forEach((_, j) => {
            const bad = proof.map((p, k) => (k === j ? flip(p, bit) : p));
            check(`proof[${j}] bit ${bit}`, verifyInclusion(leaf, i, n, bad, root));
          });
        }
      }
    }
    expect(tried).toBeGreaterThan(40_000);
    expect(accepted).toEqual([]);
  });

  it('returns false, never throws, on malformed input', () => {
    const leaves = leavesOf(5);
    const root = merkleRoot(leaves);
    const leaf = leafHash(leaves[2]);
    const proof = inclusionProof(leaves, 2);
    const garbage: unknown[] = [null, undefined, 'x', 1, {}, [null], [new Uint8Array(3)]];
    expect(verifyInclusion(leaf, 5, 5, proof, root)).toBe(false);
    expect(verifyInclusion(leaf, -1, 5, proof, root)).toBe(false);
    expect(verifyInclusion(leaf, 2.5, 5, proof, root)).toBe(false);
    expect(verifyInclusion(leaf, 2, 2 ** 64, proof, root)).toBe(false);
    expect(verifyInclusion(leaf, 2, NaN, proof, root)).toBe(false);
    expect(verifyInclusion(leaf, 2, 5, proof.slice(1), root)).toBe(false);
    expect(verifyInclusion(leaf, 2, 5, [...proof, proof[0]], root)).toBe(false);
    for (const g of garbage) {
      expect(verifyInclusion(g as Uint8Array, 2, 5, proof, root)).toBe(false);
      expect(verifyInclusion(leaf, 2, 5, g as Uint8Array[], root)).toBe(false);
      expect(verifyInclusion(leaf, 2, 5, proof, g as Uint8Array)).toBe(false);
      expect(verifyInclusion(leaf, g as number, 5, proof, root)).toBe(false);
    }
  });

  it('refuses to build a proof for an index outside the tree', () => {
    expect(() => inclusionProof(leavesOf(3), 3)).toThrow(RangeError);
    expect(() => inclusionProof([], 0)).toThrow(RangeError);
  });
});

describe('verifyConsistency', () => {
  it('verifies RFC 6962 SUBPROOFs for every 1 <= m <= n <= 20', () => {
    for (let n = 1; n <= 20; n++) {
      const leaves = leavesOf(n);
      const root2 = merkleRoot(leaves);
      for (let m = 1; m <= n; m++) {
        const root1 = merkleRoot(leaves.slice(0, m));
        const proof = naiveSubproof(m, leaves, true);
        expect(verifyConsistency(m, n, proof, root1, root2)).toBe(true);
        if (m < n) {
          expect(verifyConsistency(m, n, proof, root2, root1)).toBe(false);
          expect(verifyConsistency(m, n, proof.slice(1), root1, root2)).toBe(false);
          expect(verifyConsistency(m, n, [...proof, root1], root1, root2)).toBe(false);
          proof.forEach((_, j) => {
            const bad = proof.map((p, k) => (k === j ? flip(p, j * 7) : p));
            expect(verifyConsistency(m, n, bad, root1, root2)).toBe(false);
          });
        }
      }
    }
  });

  it('returns false, never throws, on malformed input', () => {
    const root = merkleRoot(leavesOf(3));
    for (const g of [null, undefined, 'x', {}, [null]]) {
      expect(verifyConsistency(1, 3, g as Uint8Array[], root, root)).toBe(false);
      expect(verifyConsistency(1, 3, [root], g as Uint8Array, root)).toBe(false);
      expect(verifyConsistency(g as number, 3, [root], root, root)).toBe(false);
    }
    expect(verifyConsistency(0, 0, [], root, root)).toBe(false);
    expect(verifyConsistency(2 ** 60, 2 ** 61, [root], root, root)).toBe(false);
  });
});

describe('prediction manifests', () => {
  const hashes = Array.from({ length: 11 }, (_, i) => `sha256:${createHash('sha256').update(`p${i}`).digest('hex')}`);

  it('uses the 32 raw bytes of each prediction hash as the leaf', () => {
    const leaves = hashes.map((h) => new Uint8Array(Buffer.from(h.slice(7), 'hex')));
    expect(manifestRoot(hashes)).toBe(`sha256:${hex(naiveMth(leaves))}`);
    expect(predictionLeaf(hashes[0])).toEqual(leaves[0]);
  });

  it('rejects a malformed prediction hash', () => {
    for (const bad of ['', hashes[0].slice(7), hashes[0].toUpperCase(), `${hashes[0]}0`, 'sha256:xyz']) {
      expect(() => predictionLeaf(bad)).toThrow(TypeError);
    }
    expect(() => manifestRoot([hashes[0], 'nope'])).toThrow(TypeError);
  });

  it('proves and verifies every prediction of the manifest', () => {
    const root = manifestRoot(hashes);
    hashes.forEach((h, i) => {
      const proof = predictionInclusionProof(hashes, h);
      expect(proof).toMatchObject({ leaf_index: i, tree_size: hashes.length, root });
      expect(proof!.leaf_hash).toBe(`sha256:${hex(leafHash(predictionLeaf(h)))}`);
      expect(verifyPredictionProof(proof, h)).toBe(true);
      expect(verifyPredictionProof(proof, h, root)).toBe(true);
      expect(verifyPredictionProof(proof, hashes[(i + 1) % hashes.length])).toBe(false);
      expect(verifyPredictionProof(proof, h, manifestRoot(hashes.slice(1)))).toBe(false);
    });
  });

  it('answers null for a hash that is not in the manifest', () => {
    expect(predictionInclusionProof(hashes.slice(1), hashes[0])).toBeNull();
  });

  it('rejects tampered or malformed proofs without throwing', () => {
    const proof = predictionInclusionProof(hashes, hashes[4])!;
    const tampered = [
      { ...proof, leaf_index: 5 },
      { ...proof, tree_size: 4 },
      { ...proof, tree_size: 2 ** 64 },
      { ...proof, root: manifestRoot(hashes.slice(1)) },
      { ...proof, audit_path: [...proof.audit_path].reverse() },
      { ...proof, audit_path: proof.audit_path.slice(1) },
      { ...proof, audit_path: [...proof.audit_path.slice(1), 'sha256:00'] },
      { ...proof, leaf_hash: proof.audit_path[0] },
      { ...proof, leaf_index: '4' },
      { ...proof, audit_path: 'x' },
      null,
      'proof',
      {},
    ];
    for (const t of tampered) expect(verifyPredictionProof(t, hashes[4])).toBe(false);
    expect(verifyPredictionProof(proof, 'not a hash')).toBe(false);
  });
});
