import { hash } from 'node:crypto';

const TAGGED = /^sha256:([0-9a-f]{64})$/;
const BARE = /^[0-9a-fA-F]{64}$/;

/** Lowercase hex SHA-256 of bytes or a UTF-8 string. */
export function sha256Hex(input: string | Uint8Array): string {
  // One-shot: a Hash object costs more than the digest of a small input.
  return hash('sha256', input, 'hex');
}

/** `sha256:<hex>`, the form hashes take everywhere in the API. */
export function sha256Tagged(input: string | Uint8Array): string {
  return `sha256:${sha256Hex(input)}`;
}

/** Accepts `sha256:<hex>` or bare hex (any case); returns lowercase hex, or null if malformed. */
export function parseSha256(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const tagged = TAGGED.exec(value.toLowerCase());
  if (tagged && value.startsWith('sha256:')) return tagged[1];
  return BARE.test(value) ? value.toLowerCase() : null;
}

export const isSha256Tagged = (value: unknown): value is string => typeof value === 'string' && TAGGED.test(value);
