import { hash, randomBytes, randomUUID } from 'node:crypto';

export const newUuid = (): string => randomUUID();

// CSPRNG output drawn 4 KiB at a time, as node:crypto's randomUUID does: one randomBytes call
// per id cost more than the rest of making it (two ids per payment decision).
const POOL_BYTES = 4096;
let pool = Buffer.alloc(0);
let poolAt = 0;

/** A prefixed random id such as `auth_3f9a…`; `bytes` of CSPRNG output, hex encoded. */
export function newPrefixedId(prefix: string, bytes = 16): string {
  if (bytes > POOL_BYTES) return `${prefix}_${randomBytes(bytes).toString('hex')}`;
  if (poolAt + bytes > pool.length) {
    pool = randomBytes(POOL_BYTES);
    poolAt = 0;
  }
  // Each byte is handed out once: the offset only moves on.
  const hex = pool.toString('hex', poolAt, poolAt + bytes);
  poolAt += bytes;
  return `${prefix}_${hex}`;
}

/**
 * A prefixed id in `newPrefixedId`'s shape, named by `seed` instead of drawn at random: the same
 * seed and prefix give the same id. For things an idempotent request creates, so that running it
 * again (after a crash left its key unanswered) names what the first run created.
 */
export function derivedPrefixedId(prefix: string, seed: string, bytes = 16): string {
  return `${prefix}_${hash('sha256', `${prefix}\n${seed}`, 'hex').slice(0, bytes * 2)}`;
}

/** The id of what a request creates: named by its seed when it has one (derivedPrefixedId), random otherwise. */
export const prefixedIdFor = (prefix: string, seed: string | undefined): string => (seed === undefined ? newPrefixedId(prefix) : derivedPrefixedId(prefix, seed));

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;
export const isUuid = (value: unknown): value is string => typeof value === 'string' && UUID_RE.test(value);
