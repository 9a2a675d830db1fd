import { sha256 } from '@noble/hashes/sha2.js';
import { concatBytes, equalBytes, fromHex, toHex } from '../encoding/bytes';
import { isSha256Tagged } from '../encoding/hashing';

/**
 * RFC 6962 Merkle trees (Certificate Transparency) with the RFC 9162 §2.1.3.2 / §2.1.4.2 proof
 * checks, as the server's libs/notary merkle.ts builds them:
 *   leaf hash = SHA-256(0x00 || leaf),  node hash = SHA-256(0x01 || left || right).
 * A prediction manifest's leaves are the 32 raw bytes of each `sha256:<hex>` prediction hash.
 * Verifiers return false on malformed input; sizes must be safe integers.
 */
const HASH_SIZE = 32;

export const merkleLeafHash = (leaf: Uint8Array): Uint8Array => sha256(concatBytes(Uint8Array.of(0), leaf));
const nodeHash = (left: Uint8Array, right: Uint8Array): Uint8Array => sha256(concatBytes(Uint8Array.of(1), left, right));

const isSize = (n: unknown): n is number => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;
const isHash = (h: unknown): h is Uint8Array => h instanceof Uint8Array && h.length === HASH_SIZE;
const isHashList = (p: unknown): p is Uint8Array[] => Array.isArray(p) && p.every(isHash);
// Plain-number bit operations: JS `>>` and `&` truncate to 32 bits, tree sizes may not fit.
const lsb = (n: number): boolean => n % 2 === 1;
const shr = (n: number): number => Math.floor(n / 2);

/** RFC 9162 §2.1.3.2: is the leaf with this hash at `index` of the tree of `treeSize` with `root`? */
export function verifyInclusion(leafHash: Uint8Array, index: number, treeSize: number, proof: Uint8Array[], root: Uint8Array): boolean {
  if (!isSize(index) || !isSize(treeSize) || index >= treeSize) return false;
  if (!isHash(leafHash) || !isHash(root) || !isHashList(proof)) return false;
  let fn = index;
  let sn = treeSize - 1;
  let r = leafHash;
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

/** RFC 9162 §2.1.4.2: is the tree of `size2` an append-only extension of the tree of `size1`? */
export function verifyConsistency(size1: number, size2: number, proof: Uint8Array[], root1: Uint8Array, root2: Uint8Array): boolean {
  if (!isSize(size1) || !isSize(size2) || size1 === 0 || size1 > size2) return false;
  if (!(root1 instanceof Uint8Array) || !(root2 instanceof Uint8Array) || !isHashList(proof)) return false;
  if (size1 === size2) return proof.length === 0 && equalBytes(root1, root2);
  if (proof.length === 0 || !isHash(root1) || !isHash(root2)) return false;
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

/** One prediction's inclusion proof; every hash is `sha256:<64 lowercase hex>`. */
export interface PredictionInclusionProof {
  leaf_index: number;
  tree_size: number;
  leaf_hash: string;
  /** Ordered from the leaf's sibling up to the root. */
  audit_path: string[];
  root: string;
}

/** GET /api/predictions/proof?certificate_id=&hash= */
export interface PredictionProofResponse {
  certificate_id: string;
  manifest_hash: string;
  prediction_hash: string;
  proof: PredictionInclusionProof;
  verified?: boolean;
}

export interface VerifyPredictionProofOptions {
  /** The prediction's `sha256:<hex>`; defaults to the response's `prediction_hash`. */
  predictionHash?: string;
  /**
   * The manifest_hash of the manifest certificate, taken from a payload that verifyCertificate
   * accepted. Without it the proof only shows inclusion under whatever root it names.
   */
  manifestHash?: string;
}

export type PredictionProofFailure = 'malformed' | 'leaf_mismatch' | 'root_mismatch' | 'inclusion_invalid';

export interface PredictionProofVerification {
  valid: boolean;
  reason?: PredictionProofFailure;
  /** `root_not_pinned` when no manifestHash was given; `leaf_not_bound` when no prediction hash was. */
  warnings: string[];
  leaf_index: number | null;
  tree_size: number | null;
  root: string | null;
}

const untag = (value: string): Uint8Array => fromHex(value.slice('sha256:'.length))!;
const tag = (bytes: Uint8Array): string => `sha256:${toHex(bytes)}`;

/**
 * Verifies an RFC 6962 inclusion proof of a prediction hash in a certified prediction manifest.
 * Accepts the GET /api/predictions/proof response or the bare proof. Never throws.
 */
export function verifyPredictionProof(proof: unknown, options: VerifyPredictionProofOptions = {}): PredictionProofVerification {
  const result: PredictionProofVerification = { valid: false, warnings: [], leaf_index: null, tree_size: null, root: null };
  const fail = (reason: PredictionProofFailure): PredictionProofVerification => ({ ...result, valid: false, reason });
  if (typeof proof !== 'object' || proof === null) return fail('malformed');
  const envelope = proof as Partial<PredictionProofResponse>;
  const p = (typeof envelope.proof === 'object' && envelope.proof !== null ? envelope.proof : proof) as Partial<Record<keyof PredictionInclusionProof, unknown>>;
  const predictionHash = options.predictionHash ?? envelope.prediction_hash;
  if (!isSha256Tagged(p.leaf_hash) || !isSha256Tagged(p.root)) return fail('malformed');
  if (!Array.isArray(p.audit_path) || !p.audit_path.every(isSha256Tagged)) return fail('malformed');
  if (!isSize(p.leaf_index) || !isSize(p.tree_size)) return fail('malformed');
  if (predictionHash !== undefined && !isSha256Tagged(predictionHash)) return fail('malformed');
  if (options.manifestHash !== undefined && !isSha256Tagged(options.manifestHash)) return fail('malformed');
  result.leaf_index = p.leaf_index;
  result.tree_size = p.tree_size;
  result.root = p.root;

  if (predictionHash === undefined) result.warnings.push('leaf_not_bound');
  else if (tag(merkleLeafHash(untag(predictionHash))) !== p.leaf_hash) return fail('leaf_mismatch');
  // The response's own manifest_hash must agree with the proof's root; only a caller's pin is trusted.
  if (envelope.manifest_hash !== undefined && envelope.manifest_hash !== p.root) return fail('root_mismatch');
  if (options.manifestHash === undefined) result.warnings.push('root_not_pinned');
  else if (options.manifestHash !== p.root) return fail('root_mismatch');
  const ok = verifyInclusion(untag(p.leaf_hash), p.leaf_index, p.tree_size, p.audit_path.map(untag), untag(p.root));
  return ok ? { ...result, valid: true } : fail('inclusion_invalid');
}
