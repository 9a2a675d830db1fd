import { hash as oneShotHash } from 'node:crypto';
import { isSha256Tagged } from '@app/crypto';

/**
 * RFC 6962 §2.1 Merkle tree hash (Certificate Transparency), with RFC 9162 §2.1.3.2 / §2.1.4.2
 * proof verification.
 *
 *   leaf hash  = SHA-256(0x00 || leaf)
 *   node hash  = SHA-256(0x01 || left || right)
 *   MTH({})    = SHA-256("")
 *   MTH(D[n])  = node(MTH(D[0:k]), MTH(D[k:n])), k the largest power of two < n
 *
 * Verifiers return false on anything malformed instead of throwing: a proof comes from outside.
 * Sizes and indices must be safe integers (< 2^53); larger ones are rejected, never rounded.
 */

const HASH_SIZE = 32;
const LEAF_PREFIX = Uint8Array.of(0);
const NODE_PREFIX = Uint8Array.of(1);

// One-shot hash of the concatenation: crypto.hash is markedly cheaper than createHash per node,
// which matters for manifests of up to 100,000 predictions.
function sha256(...parts: Uint8Array[]): Uint8Array {
  const buf = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    buf.set(p, at);
    at += p.length;
  }
  return new Uint8Array(oneShotHash('sha256', buf, 'buffer'));
}

export function leafHash(leaf: Uint8Array): Uint8Array {
  return sha256(LEAF_PREFIX, leaf);
}

function nodeHash(left: Uint8Array, right: Uint8Array): Uint8Array {
  return sha256(NODE_PREFIX, left, right);
}

/** Largest power of two strictly smaller than n (n >= 2). */
function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/** MTH over already-hashed leaves [lo, hi); hi > lo. */
function subtreeRoot(hashes: Uint8Array[], lo: number, hi: number): Uint8Array {
  if (hi - lo === 1) return hashes[lo];
  const k = splitPoint(hi - lo);
  return nodeHash(subtreeRoot(hashes, lo, lo + k), subtreeRoot(hashes, lo + k, hi));
}

export function merkleRoot(leaves: Uint8Array[]): Uint8Array {
  if (leaves.length === 0) return sha256();
  return subtreeRoot(leaves.map(leafHash), 0, leaves.length);
}

/** RFC 6962 §2.1.1 audit path for leaves[index], ordered from the leaf's sibling up to the root. */
export function inclusionProof(leaves: Uint8Array[], index: number): Uint8Array[] {
  if (!Number.isInteger(index) || index < 0 || index >= leaves.length) {
    throw new RangeError(`leaf index ${index} is outside a tree of ${leaves.length} leaves`);
  }
  const hashes = leaves.map(leafHash);
  const path: Uint8Array[] = [];
  const walk = (m: number, lo: number, hi: number): void => {
    if (hi - lo === 1) return;
    const k = splitPoint(hi - lo);
    if (m < k) {
      walk(m, lo, lo + k);
      path.push(subtreeRoot(hashes, lo + k, hi));
    } else {
      walk(m - k, lo + k, hi);
      path.push(subtreeRoot(hashes, lo, lo + k));
    }
  };
  walk(index, 0, leaves.length);
  return path;
}

const isSize = (n: unknown): n is number => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;
const isHash = (h: unknown): h is Uint8Array => h instanceof Uint8Array && h.length === HASH_SIZE;
const isHashList = (p: unknown): p is Uint8Array[] => Array.isArray(p) && p.every(isHash);

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i] ^ b[i];
  return diff === 0;
}

// Bit operations on plain numbers: JS `>>` and `&` truncate to 32 bits, sizes may not.
const lsb = (n: number): boolean => n % 2 === 1;
const shr = (n: number): number => Math.floor(n / 2);

/** RFC 9162 §2.1.3.2. */
export function verifyInclusion(
  leafHashValue: Uint8Array,
  index: number,
  treeSize: number,
  proof: Uint8Array[],
  root: Uint8Array,
): boolean {
  if (!isSize(index) || !isSize(treeSize) || index >= treeSize) return false;
  if (!isHash(leafHashValue) || !isHash(root) || !isHashList(proof)) return false;
  let fn = index;
  let sn = treeSize - 1;
  let r = leafHashValue;
  for (const p of proof) {
    if (sn === 0) return false;
    if (lsb(fn) || fn === sn) {
      r = nodeHash(p, r);
      while (!lsb(fn) && fn !== 0) {
        fn = shr(fn);
        sn = shr(sn);
      }
    } else {
      r = nodeHash(r, p);
    }
    fn = shr(fn);
    sn = shr(sn);
  }
  return sn === 0 && equalBytes(r, root);
}

/**
 * RFC 9162 §2.1.4.2, for 0 < size1 <= size2. Equal sizes need an empty proof and byte-equal
 * roots of any length (the upstream vectors use 12-byte placeholders there). A proof from the
 * empty tree proves nothing and is rejected, as current transparency-dev/merkle does.
 */
export function verifyConsistency(
  size1: number,
  size2: number,
  proof: Uint8Array[],
  root1: Uint8Array,
  root2: Uint8Array,
): boolean {
  if (!isSize(size1) || !isSize(size2) || size1 === 0 || size1 > size2) return false;
  if (!(root1 instanceof Uint8Array) || !(root2 instanceof Uint8Array) || !isHashList(proof)) return false;
  if (size1 === size2) return proof.length === 0 && equalBytes(root1, root2);
  if (proof.length === 0 || !isHash(root1) || !isHash(root2)) return false;

  // Step 2: a power-of-two first tree is itself a node of the second; its hash opens the path.
  const path = isPowerOfTwo(size1) ? [root1, ...proof] : proof;
  let fn = size1 - 1;
  let sn = size2 - 1;
  while (lsb(fn)) {
    fn = shr(fn);
    sn = shr(sn);
  }
  let fr = path[0];
  let sr = path[0];
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (lsb(fn) || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      while (!lsb(fn) && fn !== 0) {
        fn = shr(fn);
        sn = shr(sn);
      }
    } else {
      sr = nodeHash(sr, c);
    }
    fn = shr(fn);
    sn = shr(sn);
  }
  return sn === 0 && equalBytes(fr, root1) && equalBytes(sr, root2);
}

function isPowerOfTwo(n: number): boolean {
  while (n > 1 && !lsb(n)) n = shr(n);
  return n === 1;
}

/*
 * Predictions. A manifest's manifest_hash is the Merkle root over its prediction_hashes, in the
 * order the manifest lists them (not sorted). The SDK must reproduce exactly this encoding:
 *
 *   leaf data  = the 32 raw bytes of a prediction hash: "sha256:<64 lowercase hex>" hex-decoded
 *                (not the ASCII string)
 *   leaf hash  = SHA-256(0x00 || leaf data)
 *   root       = RFC 6962 MTH as above
 *   proof      = { leaf_index, tree_size, leaf_hash, audit_path, root }; every hash in it is
 *                "sha256:<64 lowercase hex>", audit_path ordered from the leaf's sibling upward,
 *                verified with the RFC 9162 §2.1.3.2 algorithm.
 */

export interface PredictionInclusionProof {
  leaf_index: number;
  tree_size: number;
  leaf_hash: string;
  audit_path: string[];
  root: string;
}

const tag = (bytes: Uint8Array): string => `sha256:${Buffer.from(bytes).toString('hex')}`;
const untag = (value: string): Uint8Array => new Uint8Array(Buffer.from(value.slice('sha256:'.length), 'hex'));

/** The 32-byte leaf for a `sha256:<64 lowercase hex>` prediction hash; throws on any other form. */
export function predictionLeaf(hash: string): Uint8Array {
  if (!isSha256Tagged(hash)) throw new TypeError(`not a sha256:<64 lowercase hex> prediction hash: ${String(hash)}`);
  return untag(hash);
}

export function manifestRoot(predictionHashes: string[]): string {
  return tag(merkleRoot(predictionHashes.map(predictionLeaf)));
}

/** Proof that `hash` is in the manifest (its first occurrence), or null when it is not listed. */
export function predictionInclusionProof(predictionHashes: string[], hash: string): PredictionInclusionProof | null {
  const index = predictionHashes.indexOf(hash);
  if (index < 0) return null;
  const leaves = predictionHashes.map(predictionLeaf);
  return {
    leaf_index: index,
    tree_size: leaves.length,
    leaf_hash: tag(leafHash(leaves[index])),
    audit_path: inclusionProof(leaves, index).map(tag),
    root: tag(merkleRoot(leaves)),
  };
}

/**
 * True when `proof` shows `hash` under `proof.root`. The root is only as trustworthy as its source:
 * pass the certified manifest_hash as `manifestHash` to pin it. Never throws.
 */
export function verifyPredictionProof(proof: unknown, hash: string, manifestHash?: string): boolean {
  if (typeof proof !== 'object' || proof === null || !isSha256Tagged(hash)) return false;
  const p = proof as Partial<Record<keyof PredictionInclusionProof, unknown>>;
  if (!isSha256Tagged(p.leaf_hash) || !isSha256Tagged(p.root)) return false;
  if (!Array.isArray(p.audit_path) || !p.audit_path.every(isSha256Tagged)) return false;
  if (typeof p.leaf_index !== 'number' || typeof p.tree_size !== 'number') return false;
  if (manifestHash !== undefined && manifestHash !== p.root) return false;
  const expectedLeaf = leafHash(predictionLeaf(hash));
  if (tag(expectedLeaf) !== p.leaf_hash) return false;
  return verifyInclusion(expectedLeaf, p.leaf_index, p.tree_size, p.audit_path.map(untag), untag(p.root));
}
